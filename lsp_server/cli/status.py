"""`toolhost status [--root DIR] [--json]`: the configuration a new session of this project
gets: the managed file, whether the workspace `.toolhost.toml` is approved (and what it
would loosen if it were), and which layer set each policy value. An editor's running
server may add its own settings on top: when one serves the folder, its sources follow."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    status = commands.add_parser(
        "status", help="the configuration layers, untrusted workspace config, policy sources"
    )
    status.add_argument("--root", type=Path, default=Path.cwd(), help="project to check")
    status.add_argument("--json", action="store_true", help="print it as JSON")


def run(args: argparse.Namespace) -> int:
    from lsp_server.config.layers import load_layers
    from lsp_server.config.overview import as_json, render_config
    from lsp_server.home.dirs import Dirs

    root = args.root.expanduser().resolve()
    loaded = load_layers(None, [root], Dirs.from_environment())
    editor = _editor_sources(root)
    if args.json:
        print(json.dumps({"root": str(root), **as_json(loaded), "editor": editor}, indent=2))
        return 0
    print(f"toolhost status for {root}\n")
    print(render_config(loaded))
    if editor is not None:
        print(f"\nThe editor's toolhost here ({editor['name']}) runs with:")
        for key, source in editor["policySources"].items():
            print(f"  {key.ljust(28)}  from {source}")
    return 0


def _editor_sources(root: Path) -> dict[str, Any] | None:
    """Which layer set each policy value in the editor's running toolhost for this folder
    (its editor settings count there), if one runs."""
    import asyncio

    from lsp_server.attach.attach_client import editor_status
    from lsp_server.home.dirs import Dirs

    try:
        found = asyncio.run(editor_status(Dirs.from_environment().attach_folder, root))
    except OSError:
        return None
    if found is None or not isinstance(found[1].get("policySources"), dict):
        return None
    record, status = found
    name = f"{status.get('editor') or 'editor'}, pid {record.pid}"
    return {"name": name, "policySources": status["policySources"]}
