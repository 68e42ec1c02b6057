"""`toolhost checkpoints --root DIR`: the calls that changed files there, newest first
(from the state folder the server uses; `toolhost revert CALL_ID` undoes one)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lsp_server.protocol import CheckpointInfo


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listing = commands.add_parser("checkpoints", help="list the calls that changed files")
    listing.add_argument("--root", type=Path, default=Path.cwd())
    listing.add_argument("--session", help="only this session's calls")
    listing.add_argument("--limit", type=int, default=20)
    listing.add_argument("--json", action="store_true", help="print the result as JSON")
    listing.add_argument(
        "--diff",
        action="store_true",
        help="with --session: one diff of everything that session changed (to review it)",
    )


def run(args: argparse.Namespace) -> int:
    if args.diff and not args.session:
        print("toolhost checkpoints: --diff needs --session SESSION", file=sys.stderr)
        return 2
    return asyncio.run(_diff(args) if args.diff else _list(args))


async def _diff(args: argparse.Namespace) -> int:
    from lsp_server.checkpoints.recorder import Checkpoints
    from lsp_server.cli.revert import one_shot_runtime
    from lsp_server.protocol import SessionChangesParams, message_converter
    from lsp_server.runtime.session_changes import session_changes

    runtime, lifecycle = one_shot_runtime(args.root)
    try:
        params = SessionChangesParams(args.session)
        result = await session_changes(runtime.services.get(Checkpoints), params)
    finally:
        await lifecycle.shutdown()
    if args.json:
        print(json.dumps(message_converter().unstructure(result), indent=2, ensure_ascii=False))
    else:
        print(result.text)
        print(result.diff, end="")
    return 0


async def _list(args: argparse.Namespace) -> int:
    from lsp_server.checkpoints.recorder import Checkpoints
    from lsp_server.cli.revert import one_shot_runtime
    from lsp_server.protocol import CheckpointsParams, message_converter
    from lsp_server.runtime.reverts import list_checkpoints

    runtime, lifecycle = one_shot_runtime(args.root)
    try:
        params = CheckpointsParams(session=args.session, limit=args.limit)
        result = await list_checkpoints(runtime.services.get(Checkpoints), params)
    finally:
        await lifecycle.shutdown()
    if args.json:
        print(json.dumps(message_converter().unstructure(result), indent=2, ensure_ascii=False))
    else:
        print(listing(result.checkpoints))
    return 0


def listing(checkpoints: list[CheckpointInfo]) -> str:
    if not checkpoints:
        return "No checkpoints here (no call changed a file, or the bounds dropped them)."
    lines = []
    for cp in checkpoints:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(cp.time))
        label = f"  {cp.label}" if cp.label else ""
        who = f"{cp.session}: {cp.agent}" if cp.agent and cp.agent != cp.session else cp.session
        lines.append(f"{cp.call_id}  {when}  {cp.tool}  [{who}]{label}")
        for f in cp.files:
            moved = f" (from {f.from_path})" if f.from_path else ""
            stored = " (not stored: over the size limit)" if f.not_stored else ""
            lines.append(f"    {f.change:<8} {f.path}{moved}{stored}")
    lines.append("Undo one with: toolhost revert CALL_ID --root DIR")
    lines.append(
        "A session's every call: review with toolhost checkpoints --session S --diff, "
        "undo with toolhost revert --session S"
    )
    return "\n".join(lines)
