"""`toolhost revert CALL_ID --root DIR`: put back what one call changed, without an editor
(the disk only), never over what someone changed since: those files are listed with the
diff of what changed. The revert is itself a checkpoint (revert its id to redo)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lsp_server.protocol import RevertResult, RevertSessionResult
    from lsp_server.runtime.dispatch import Runtime
    from lsp_server.runtime.lifecycle import Lifecycle


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    revert = commands.add_parser("revert", help="undo what one call changed")
    revert.add_argument("call_id", metavar="CALL_ID", nargs="?", help="from `toolhost checkpoints`")
    revert.add_argument(
        "--session",
        metavar="SESSION",
        help="instead of one call: every call of this session (agent), newest first",
    )
    revert.add_argument("--root", type=Path, default=Path.cwd())
    revert.add_argument("--json", action="store_true", help="print the result as JSON")
    revert.add_argument(
        "--include-shared",
        action="store_true",
        help="revert too the files another agent or the editor may also have changed while "
        "a command ran (listed and left out otherwise)",
    )


def run(args: argparse.Namespace) -> int:
    if (args.call_id is None) == (args.session is None):
        print("toolhost revert: name a CALL_ID or --session SESSION (one of them)", file=sys.stderr)
        return 2
    return asyncio.run(_revert(args))


def one_shot_runtime(root: Path) -> tuple[Runtime, Lifecycle]:
    """The runtime of `toolhost revert` and `toolhost checkpoints` (their output is the
    checkpoints': the config's problems are `toolhost call`'s and `status`'s to show)."""
    from lsp_server import compose
    from lsp_server.home.dirs import Dirs

    opened = compose.open_runtime([root.resolve()], Dirs.from_environment(), long_lived=False)
    return opened.runtime, opened.lifecycle


async def _revert(args: argparse.Namespace) -> int:
    from lsp_server.checkpoints.recorder import Checkpoints
    from lsp_server.core.errors import ToolError
    from lsp_server.protocol import RevertParams, RevertSessionParams, message_converter
    from lsp_server.runtime.file_service import FileService
    from lsp_server.runtime.reverts import revert_request
    from lsp_server.runtime.session_changes import revert_session
    from lsp_server.runtime.sessions.observations import Observations

    runtime, lifecycle = one_shot_runtime(args.root)
    files = FileService(runtime.workspace, Observations(), runtime.config.limits, None)
    checkpoints = runtime.services.get(Checkpoints)
    result: RevertResult | RevertSessionResult
    try:
        if args.session is not None:
            params = RevertSessionParams(args.session, "cli", args.include_shared)
            result = await revert_session(checkpoints, files, runtime.locks, params)
        else:
            one = RevertParams(args.call_id, "cli", args.include_shared)
            result = await revert_request(checkpoints, files, runtime.locks, one)
    except ToolError as exc:
        print(f"toolhost: {exc.message}", file=sys.stderr)
        return 2
    finally:
        await lifecycle.shutdown()
    if args.json:
        print(json.dumps(message_converter().unstructure(result), indent=2, ensure_ascii=False))
        return 1 if result.conflicts else 0
    print(result.text)
    for conflict in result.conflicts:
        if conflict.diff:
            print(f"\n--- changed since the call: {conflict.path}\n{conflict.diff}", end="")
    return 1 if result.conflicts else 0
