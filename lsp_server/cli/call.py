"""`toolhost call NAME [JSON]`: one tool call through the same dispatch as the server.

What a person meets here (docs/CLI.md): the workspace is the nearest folder up from here
with `.git` or `.toolhost.toml` unless `--root` says otherwise, and stderr says which one;
on a terminal the approval prompt asks (policy/tty_prompt.py), and what it allowed "for
this session" is kept with the session for later calls of the same `--session`; a refusal
is printed in words for a person (the model's full text stays in `--json`); a call that
would start a background job is refused before it runs, since the process ends with the
call and the job with it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from lsp_server.core.contract import SURFACES

WORKSPACE_MARKERS = (".git", ".toolhost.toml")
# The tools that act on background jobs, which never outlive a `toolhost call`.
JOB_TOOLS = ("job_output", "job_kill", "job_input")

DESCRIPTION = """\
Run one tool call, as an agent would, through the same checks as the server: paths
confined to the workspace, approval asked when needed, the result bounded. The tools and
their arguments: `toolhost tools` and `toolhost tools NAME`."""

EPILOG = """\
examples:
  toolhost call read_file '{"path": "src/app.py"}'
  toolhost call edit_file '{"path": "src/app.py", "old_string": "x = 1", "new_string": "x = 2"}'
  toolhost call bash '{"command": "git status"}' --session review

paths in the arguments are relative to the workspace root, wherever you run the command.
Approval: on a terminal you are asked; without one, a call that needs approval is refused
unless --yes is given. Exit status: 0 done, 1 the tool refused or failed, 2 a usage error."""


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    call = commands.add_parser(
        "call",
        help="run one tool call through the same dispatch",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    call.add_argument("name", help="the tool to call (the list: toolhost tools --surface full)")
    call.add_argument(
        "arguments",
        nargs="?",
        default="{}",
        help="the tool's arguments as one JSON object (default {}); see toolhost tools NAME",
    )
    call.add_argument(
        "--root",
        type=Path,
        default=None,
        help="the workspace folder the call may read and change, and that relative paths "
        "start from (default: the nearest folder up from here holding .git or "
        ".toolhost.toml, else the current folder)",
    )
    call.add_argument(
        "--session",
        default="cli",
        help="the session (per workspace) whose reads, stored results and approvals for the "
        "session later calls share (default: cli)",
    )
    call.add_argument(
        "--fresh",
        action="store_true",
        help="start the session anew: forget what it read, the results it stored and what "
        "was allowed for it",
    )
    call.add_argument(
        "--surface",
        choices=SURFACES,
        default="full",
        help="which tool set to call from: the one an agent is given (core, minimal) or "
        "every tool (full, the default); toolhost tools --surface S lists each",
    )
    call.add_argument(
        "--yes",
        action="store_true",
        help="allow calls that would need approval without asking (deny rules, readOnly "
        "mode and a managed config that requires a person still apply)",
    )
    call.add_argument(
        "--json",
        action="store_true",
        help="print the whole result as JSON: the text the model would read, its error "
        "code and recovery hint, and the meta data",
    )


def enclosing_workspace(start: Path) -> Path | None:
    """The nearest folder from `start` up holding `.git` or `.toolhost.toml`, or None."""
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in WORKSPACE_MARKERS):
            return folder
    return None


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_call(args))


def _choose_root(args: argparse.Namespace) -> tuple[Path, str | None]:
    """The root, and (when --root was not given) the line that tells a person about it."""
    if args.root is not None:
        return args.root.resolve(), None
    here = Path.cwd().resolve()
    found = enclosing_workspace(here)
    if found is None:
        return here, (
            f"toolhost: workspace {here} (no .git or .toolhost.toml above it: the current "
            "folder); paths are relative to it"
        )
    marker = next(m for m in WORKSPACE_MARKERS if (found / m).exists())
    where = "" if found == here else f", not to the current folder {here.relative_to(found)}/"
    return (
        found,
        f"toolhost: workspace {found} (it holds {marker}); paths are relative to it{where}",
    )


async def _call(args: argparse.Namespace) -> int:
    from lsp_server import compose
    from lsp_server.config.broad_roots import refused_root
    from lsp_server.config.layers import LoadedConfig
    from lsp_server.home.dirs import Dirs
    from lsp_server.policy.authorizer import PolicyService
    from lsp_server.policy.prompt import Asker
    from lsp_server.policy.tty_prompt import TerminalAsker, allow_everything
    from lsp_server.protocol import CallParams, message_converter
    from lsp_server.runtime.sessions.session_files import SessionFiles

    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        print(f"toolhost: the arguments are not JSON ({exc})", file=sys.stderr)
        return 2
    root, said = _choose_root(args)
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
    if said is not None:
        print(said, file=sys.stderr)

    terminal: TerminalAsker | None = None

    def asker_for(loaded: LoadedConfig) -> Asker | None:
        """Who answers "ask": --yes allows, a person at a terminal is asked, otherwise nobody
        (the unattended decision). Deny rules and readOnly mode apply in every case."""
        nonlocal terminal
        if args.yes and loaded.may_answer_yes("--yes"):  # a managed file may require a person
            return allow_everything
        if not sys.stdin.isatty():
            return None
        terminal = TerminalAsker(sys.stdin, sys.stderr)
        return terminal

    # What this session read, stored and was allowed in earlier invocations (docs: CLI.md).
    sessions = SessionFiles(dirs.cli_sessions, root)
    if args.fresh:
        sessions.drop(args.session)
    opened = compose.open_runtime(
        roots, dirs, asker_for=asker_for, long_lived=False, session_folders=sessions
    )
    runtime, lifecycle = opened.runtime, opened.lifecycle
    for problem in opened.problems:
        print(f"toolhost: {problem}", file=sys.stderr)
    refusal = _job_refusal(runtime, args.name, args.surface, arguments)
    if refusal is not None:  # before anything runs: a job would die with this process
        await lifecycle.shutdown()
        print(f"toolhost: not run: {refusal}", file=sys.stderr)
        return 2
    policy = runtime.services.get(PolicyService)
    kept = sessions.approvals(args.session)
    policy.remember_for_session(args.session, kept)
    params = CallParams(
        name=args.name, arguments=arguments, session=args.session, surface=args.surface
    )
    try:
        result = await runtime.call(params)
        stopped = _running_jobs(runtime)
    finally:
        await lifecycle.shutdown()
    allowed_now = [r for r in policy.remembered_for_session(args.session) if r not in kept]
    if allowed_now:
        sessions.keep_approvals(args.session, allowed_now)
    for problem in sessions.problems:
        print(f"toolhost: {problem}", file=sys.stderr)
    if args.json:
        printed = message_converter().unstructure(result)
        printed["root"] = str(root)
        print(json.dumps(printed, indent=2, ensure_ascii=False))
    elif result.error is not None and result.error.code.startswith("permission."):
        print(refusal_in_words(result.error, terminal))
    else:
        for part in result.content:
            if part.get("type") == "text":
                print(part["text"])
            else:
                print(f"[{part.get('type')} {part.get('mimeType', '')}]")
    if stopped:  # a command that became a job while it ran (it waited for input)
        print(
            f"toolhost: stopped {', '.join(stopped)}: the command was still running when the "
            "call ended (it waited for input, or went on in the background), and `toolhost "
            "call` ends with everything it started. Give the command its input up front "
            "(a flag, a pipe), or run it from an agent or editor connected to a server.",
            file=sys.stderr,
        )
    if result.error is not None and result.error.code == "permission.unattended":
        print(
            "toolhost: this call needs approval and there is no terminal to ask; run it "
            "from a terminal to be asked, or pass --yes to allow it (deny rules and "
            "readOnly mode still apply)",
            file=sys.stderr,
        )
    return 1 if result.is_error or stopped else 0


def refusal_in_words(error: Any, terminal: Any) -> str:
    """A refused call as a person reads it: what happened and why, without the recovery
    text written for the model (`--json` keeps that). The code stays, in brackets."""
    code, message = error.code, error.message
    recovery = error.recovery or ""
    cause = message.removesuffix(f"; {recovery}") if recovery else message
    cause = cause.removeprefix(f"{code}: ")
    if code == "permission.user_denied" and terminal is not None and terminal.asked:
        _, answer = terminal.asked[-1]
        if answer.reason == "no answer on the terminal":
            cause = "the terminal closed before you answered"
        elif answer.decision == "deny":
            cause = f'you refused it ("{answer.reason}")' if answer.reason else "you refused it"
    elif code == "permission.unattended":
        head, _, rest = cause.partition(" was not allowed: it needs the user's approval (")
        why = rest.rpartition(") and no one can be asked")[0]
        if why:
            cause = f"{head} needs your approval: {why}"
    return f"Not run: {cause.rstrip('.')}. [{code}]"


def _job_refusal(runtime: Any, name: str, surface: str, arguments: Any) -> str | None:
    """Why the call is refused on the command line, where no job outlives the call."""
    if name in JOB_TOOLS:
        return (
            f"there are no background jobs for {name} on the command line: each `toolhost "
            "call` ends with its call, and so would a job. Jobs live in a server (toolhost "
            "serve, toolhost mcp), for the agent or editor connected to it."
        )
    if _starts_a_job(runtime, name, surface, arguments):
        return (
            "this would start a background job, and `toolhost call` ends after one call, "
            "which would stop the job at once. Run the command in the foreground (without "
            "run_in_background), or start jobs from an agent or editor connected to a "
            "server (toolhost serve, toolhost mcp), where they live on."
        )
    return None


def _starts_a_job(runtime: Any, name: str, surface: str, arguments: Any) -> bool:
    """Whether the call would start a background job (bash run_in_background)."""
    tool = runtime.registry.get(name, surface)
    if tool is None or tool.shell_launch is None or not isinstance(arguments, dict):
        return False
    try:
        how = tool.shell_launch(runtime.config, arguments)
    except (TypeError, ValueError, AttributeError):
        return False  # the call's validation says what is wrong with the arguments
    return bool(how.background or how.timeout_ms is None)


def _running_jobs(runtime: Any) -> list[str]:
    """The background jobs the call left running (they end with this process)."""
    from lsp_server.shell.jobs import JobManager

    manager = runtime.services.get(JobManager)
    return [job.id for job in manager.jobs() if job.running]
