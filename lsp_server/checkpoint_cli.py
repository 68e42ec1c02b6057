"""`toolhost checkpoints --root DIR` and `toolhost revert CALL_ID --root DIR`.

Both work on the state folder the server uses, without an editor: a revert then reads and
writes the disk only (a server that has the file open in an editor is not asked).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from lsp_server.policy.wiring import load_layers
from lsp_server.protocol import CheckpointsParams, RevertParams, message_converter
from lsp_server.runtime.checkpoints import Checkpoints
from lsp_server.runtime.errors import ToolError
from lsp_server.runtime.files import FileService
from lsp_server.runtime.observations import FileLocks, Observations
from lsp_server.runtime.reverts import list_checkpoints, revert_request
from lsp_server.runtime.workspace import Workspace
from lsp_server.state import state_dir


def add_parsers(commands: Any) -> None:
    listing = commands.add_parser("checkpoints", help="list the calls that changed files")
    listing.add_argument("--root", type=Path, default=Path.cwd())
    listing.add_argument("--session", help="only this session's calls")
    listing.add_argument("--limit", type=int, default=20)
    listing.add_argument("--json", action="store_true")
    revert = commands.add_parser("revert", help="undo what one call changed")
    revert.add_argument("call_id", metavar="CALL_ID")
    revert.add_argument("--root", type=Path, default=Path.cwd())
    revert.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    roots = [args.root.resolve()]
    config = load_layers(None, roots).config
    workspace = Workspace.from_config(roots, config.workspace)
    checkpoints = Checkpoints(workspace, config.checkpoints, state_dir())
    converter = message_converter()
    if args.command == "checkpoints":
        result = await list_checkpoints(checkpoints, CheckpointsParams(args.session, args.limit))
        if args.json:
            print(json.dumps(converter.unstructure(result), indent=2, ensure_ascii=False))
        else:
            print(_listing(result.checkpoints))
        return 0
    files = FileService(workspace, Observations(), config.limits, None)
    try:
        reverted = await revert_request(
            checkpoints, files, FileLocks(), RevertParams(call_id=args.call_id)
        )
    except ToolError as exc:
        print(f"toolhost: {exc.message}", file=sys.stderr)
        return 2
    finally:
        await checkpoints.settle()
    if args.json:
        print(json.dumps(converter.unstructure(reverted), indent=2, ensure_ascii=False))
    else:
        print(reverted.text)
        for conflict in reverted.conflicts:
            if conflict.diff:
                print(f"\n--- changed since the call: {conflict.path}\n{conflict.diff}", end="")
    return 1 if reverted.conflicts else 0


def _listing(checkpoints: list[Any]) -> str:
    if not checkpoints:
        return "No checkpoints (no call changed a file here, or they were dropped)."
    lines = []
    for cp in checkpoints:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(cp.time))
        label = f"  {cp.label}" if cp.label else ""
        lines.append(f"{cp.call_id}  {when}  {cp.tool}  [{cp.session}]{label}")
        for f in cp.files:
            moved = f" (from {f.from_path})" if f.from_path else ""
            stored = " (not stored: over the size limit)" if f.not_stored else ""
            lines.append(f"    {f.change:<8} {f.path}{moved}{stored}")
    lines.append("Undo one with: toolhost revert CALL_ID --root DIR")
    return "\n".join(lines)
