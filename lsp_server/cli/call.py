"""`toolhost call NAME [JSON]`: one tool call through the same dispatch as the server."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from lsp_server.core.contract import SURFACES


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    call = commands.add_parser("call", help="run one tool call through the same dispatch")
    call.add_argument("name")
    call.add_argument("arguments", nargs="?", default="{}", help="JSON object")
    call.add_argument("--root", type=Path, default=Path.cwd())
    call.add_argument(
        "--session",
        default="cli",
        help="the session (per --root) whose reads and stored results later calls share",
    )
    call.add_argument(
        "--fresh",
        action="store_true",
        help="start the session anew: forget what it read and the results it stored",
    )
    call.add_argument("--surface", choices=SURFACES, default="full")
    call.add_argument(
        "--yes",
        action="store_true",
        help="allow calls that would need approval (deny rules still apply)",
    )
    call.add_argument("--json", action="store_true", help="print the whole result as JSON")


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_call(args))


async def _call(args: argparse.Namespace) -> int:
    from lsp_server import compose
    from lsp_server.config.broad_roots import refused_root
    from lsp_server.config.layers import LoadedConfig
    from lsp_server.home.dirs import Dirs
    from lsp_server.policy.prompt import Asker
    from lsp_server.policy.tty_prompt import TerminalAsker, allow_everything
    from lsp_server.protocol import CallParams, message_converter
    from lsp_server.runtime.sessions.session_files import SessionFiles

    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        print(f"toolhost: the arguments are not JSON ({exc})", file=sys.stderr)
        return 2
    root = args.root.resolve()
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        print(f"toolhost: --root {args.root} {what}; pass the workspace folder", file=sys.stderr)
        return 2
    roots = [root]
    dirs = Dirs.from_environment()
    refused = refused_root(roots, dirs)  # a home folder or `/`: before anything reads it
    if refused is not None:
        print(f"toolhost: {refused.message('cli')}", file=sys.stderr)
        return 2

    def asker_for(loaded: LoadedConfig) -> Asker | None:
        """Who answers "ask": --yes allows, a person at a terminal is asked, otherwise nobody
        (the unattended decision). Deny rules and readOnly mode apply in every case."""
        if args.yes and loaded.may_answer_yes("--yes"):  # a managed file may require a person
            return allow_everything
        return TerminalAsker(sys.stdin, sys.stderr) if sys.stdin.isatty() else None

    # What this session read and stored in earlier invocations (docs: README, CLI).
    sessions = SessionFiles(dirs.cli_sessions, root)
    if args.fresh:
        sessions.drop(args.session)
    opened = compose.open_runtime(
        roots, dirs, asker_for=asker_for, long_lived=False, session_folders=sessions
    )
    runtime, lifecycle = opened.runtime, opened.lifecycle
    for problem in opened.problems:
        print(f"toolhost: {problem}", file=sys.stderr)
    params = CallParams(
        name=args.name, arguments=arguments, session=args.session, surface=args.surface
    )
    try:
        result = await runtime.call(params)
        stopped = _running_jobs(runtime)
    finally:
        await lifecycle.shutdown()
    for problem in sessions.problems:
        print(f"toolhost: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps(message_converter().unstructure(result), indent=2, ensure_ascii=False))
    else:
        for part in result.content:
            if part.get("type") == "text":
                print(part["text"])
            else:
                print(f"[{part.get('type')} {part.get('mimeType', '')}]")
    if stopped:  # the result said how to read it later: not from this one-shot command
        print(
            f"toolhost: stopped the background job {', '.join(stopped)}: a job lives as long "
            "as its server, and `toolhost call` ends after one call; run the command in the "
            "foreground here, or use a server (toolhost serve, toolhost mcp)",
            file=sys.stderr,
        )
    if result.error is not None and result.error.code == "permission.unattended":
        print(
            "toolhost: this call needs approval and there is no terminal to ask; "
            "pass --yes to allow it (deny rules and readOnly mode still apply)",
            file=sys.stderr,
        )
    return 1 if result.is_error else 0


def _running_jobs(runtime: Any) -> list[str]:
    """The background jobs the call left running (they end with this process)."""
    from lsp_server.shell.jobs import JobManager

    manager = runtime.services.get(JobManager)
    return [job.id for job in manager.jobs() if job.running]
