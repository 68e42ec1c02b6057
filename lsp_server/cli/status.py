"""`toolhost status [--root DIR] [--json]`: the configuration a new session of this project
gets: the managed file, whether the workspace `.toolhost.toml` is approved (and what it
would loosen if it were), and which layer set each policy value. An editor's running
server may add its own settings on top (its toolhost/status says so)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    status = commands.add_parser(
        "status", help="the configuration layers, untrusted workspace config, policy sources"
    )
    status.add_argument("--root", type=Path, default=Path.cwd(), help="project to check")
    status.add_argument("--json", action="store_true", help="print it as JSON")


def run(args: argparse.Namespace) -> int:
    from lsp_server.config.layers import load_layers
    from lsp_server.config.overview import as_json, render_config
    from lsp_server.dirs import Dirs

    root = args.root.expanduser().resolve()
    loaded = load_layers(None, [root], Dirs.from_environment())
    if args.json:
        print(json.dumps({"root": str(root), **as_json(loaded)}, indent=2))
    else:
        print(f"toolhost status for {root}\n")
        print(render_config(loaded))
    return 0
