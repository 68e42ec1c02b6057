"""bash: run a shell command that cannot hang the agent (lsp_server/shell does the work)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import attrs

from lsp_server.checkpoints.shell_calls import command_checkpoint
from lsp_server.config.tree import Config
from lsp_server.core import errors
from lsp_server.core.contract import (
    JSON_SCHEMA_DIALECT,
    ContractEntry,
    Hints,
    ShellLaunch,
    Tool,
)
from lsp_server.core.errors import ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.protocol import TOOLHOST_JOB_UPDATE, JobUpdateParams
from lsp_server.runtime.context import ToolContext
from lsp_server.secrets.names import CredentialNames
from lsp_server.tools._support.secret_grant import (
    open_grant,
    refusal,
    terminal_password_prompt,
)
from lsp_server.tools.shell.asking import adopt_waiting
from lsp_server.tools.shell.sandboxing import (
    SANDBOX_PROPERTY,
    block_new_protected,
    blocked_notes,
    open_network_proxy,
    prepare,
    protected_notes,
    protected_present,
)

if TYPE_CHECKING:
    from lsp_server.shell.jobs import Job, JobManager
    from lsp_server.shell.runner import RunLimits

MAX_TIMEOUT_MS = 600_000

COMMAND_PROPERTY = {
    "type": "string",
    "minLength": 1,
    "description": "The command line, run by bash -c.",
}

CONTRACT = ContractEntry(
    name="bash",
    core=True,
    hints=Hints(destructive=True, open_world=True),
    read_only=False,
    kind="shell",
    description=(
        "Run a shell command with `bash -c` in the session's working folder (a trailing "
        "`cd` moves it; it stays inside the workspace). It runs in a sandbox: only the "
        "workspace and a private /tmp are writable, files that make programs run code "
        "(.git, .toolhost.toml, .vscode/, .envrc ...) are read-only, "
        "there is no network (see the sandbox argument). A command that waits for input returns "
        "at once as a background job with its prompt; answer it with job_input (through "
        "use_capability). git gets no editor; full-screen programs (vi, top, less) need "
        "terminal: true, which returns the screen. A password the command asks for (git, "
        "ssh, sudo, a prompt with echo off) is asked of the user, never of you. "
        "Returns stdout and stderr interleaved as they arrived, then the exit code. "
        "Processes still running when the command ends are killed and named in the result; "
        "start servers and watchers with run_in_background and read them with job_output. "
        "Does not count as reading files: read a file before editing it."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["command"],
        "properties": {
            "command": COMMAND_PROPERTY,
            "timeout_ms": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT_MS,
                "description": (
                    "Stop a foreground command after this many milliseconds (default "
                    "120000, at most 600000); output so far comes with the timeout error."
                ),
            },
            "run_in_background": {
                "type": "boolean",
                "description": (
                    "Start the command as a background job and return its id at once "
                    "(default false); read its output with job_output, stop it with job_kill."
                ),
            },
            "description": {
                "type": "string",
                "description": "What the command does, in a few words, for the approval prompt.",
            },
            "sandbox": SANDBOX_PROPERTY,
            "terminal": {
                "type": "boolean",
                "description": (
                    "Run the command in a pseudo-terminal of 120x40 (TERM=xterm-256color) "
                    "and return its screen as text (default false): for full-screen "
                    "programs (less, top, vi) and programs that only prompt on a terminal."
                ),
            },
        },
    },
)


def job_manager(ctx: ToolContext) -> JobManager:
    """The runtime's job manager (compose.py installs it)."""
    from lsp_server.shell.jobs import JobManager

    return ctx.services.get(JobManager)


def run_limits(ctx: ToolContext, timeout_ms: int) -> RunLimits:
    from lsp_server.shell.runner import RunLimits

    shell = ctx.config.shell
    return RunLimits(
        timeout_seconds=timeout_ms / 1000,
        kill_grace_seconds=shell.kill_grace_seconds,
        pipe_wait_seconds=shell.pipe_wait_seconds,
        capture_bytes=shell.capture_bytes,
        kill_daemons=shell.kill_daemons,
        credentials=CredentialNames.of(shell.env_pass, shell.env_drop),
    )


def check_command(command: str) -> None:
    """No program argument can hold a NUL byte: refuse instead of failing in the spawn."""
    if "\x00" in command:
        raise ToolError(
            errors.INVALID_ARGUMENT,
            "the command contains a NUL byte, which no shell command can hold",
            "remove it; to produce one, write printf '\\0' in the command",
        )


def check_timeout(ctx: ToolContext, timeout_ms: int) -> None:
    limit = ctx.config.shell.max_timeout_ms
    if timeout_ms > limit:
        raise ToolError(
            errors.INVALID_ARGUMENT,
            f"timeout_ms {timeout_ms} is above the configured maximum of {limit}",
            f"pass timeout_ms of at most {limit}, or use run_in_background for longer work",
        )


def working_folder(ctx: ToolContext) -> tuple[Path, str | None]:
    """The session's folder, or the workspace root (with a note) when it went away."""
    cwd = ctx.session.cwd
    if cwd.is_dir() and ctx.workspace.contains(cwd, "write"):
        return cwd, None
    root = ctx.workspace.primary_root
    ctx.session.cwd = root
    return root, f"[working folder {cwd} no longer exists; ran in the workspace root]"


def follow_cd(ctx: ToolContext, final: Path | None, started_in: Path) -> str | None:
    """Move the session's folder to where the command ended, if that is in the workspace."""
    if final is None or final == started_in:
        return None
    if not ctx.workspace.contains(final, "write"):
        return (
            f"[working folder stays {ctx.workspace.relative(started_in)}: the command ended "
            f"in {final}, outside the workspace]"
        )
    ctx.session.cwd = final
    return f"[working folder is now {ctx.workspace.relative(final)}]"


async def execute(
    ctx: ToolContext,
    command: str,
    timeout_ms: int,
    arguments: dict[str, Any] | None = None,
    interactive: bool = True,
) -> ToolOutput:
    """Run `command` in the foreground; shared by bash and the minimal surface's bash (not
    `interactive`: stdin is /dev/null, as that surface has no job_input to answer with)."""
    from lsp_server.shell.report import command_report
    from lsp_server.shell.runner import run_command

    check_timeout(ctx, timeout_ms)
    cwd, note = working_folder(ctx)
    prepared = prepare(ctx, command, arguments or {}, cwd)
    limits = run_limits(ctx, timeout_ms)

    async def progress(line: str) -> None:
        await ctx.progress.report(line)

    proxy = await open_network_proxy(ctx, prepared.plan)
    window = None
    blocked: list[str] = []
    grant = None  # the command's password prompts go to the user (secret_grant.py)
    handed = False  # the command became a job, which closes what it holds when it ends
    try:
        window = await command_checkpoint(ctx, command, prepared.plan.needs_checkpoint)
        before = protected_present(prepared)
        grant = await open_grant(ctx, command, timeout_ms)
        if grant is not None:
            limits = attrs.evolve(limits, askpass=grant.environment)
        launcher = prepared.launcher(proxy)
        result = await run_command(
            command,
            cwd,
            limits,
            on_progress=progress,
            launcher=launcher,
            terminal=bool((arguments or {}).get("terminal", False)),
            interactive=interactive,
            on_password_prompt=terminal_password_prompt(grant),
            on_started=window.claim if window is not None else None,
        )
        if result.handover is not None:  # it asks something: a job now, closed with it
            closers = [grant.close] if grant is not None else []
            handed = True
            holding = (window, proxy, before)
            return await adopt_waiting(
                ctx,
                job_manager(ctx),
                command,
                cwd,
                limits,
                prepared,
                result,
                holding,
                launcher,
                closers,
            )
        # Before the checkpoint records; in a thread: it walks the folders the command made.
        blocked = await anyio.to_thread.run_sync(block_new_protected, prepared, before)
    except OSError as exc:
        raise ToolError(
            errors.INTERNAL_ERROR,
            f"the shell could not be started: {exc}",
            "check that bash or sh is installed and the working folder exists",
        ) from exc
    finally:
        if grant is not None and not handed:
            grant.close()
        if window is not None and not handed:
            await window.close()
        if proxy is not None and not handed:
            await proxy.close()
    said = window.window.notes if window is not None else []
    held = [*protected_notes(prepared, result.output), *blocked]
    extra = [line for line in (note, prepared.notice, *said, *blocked_notes(proxy), *held) if line]
    text = command_report(result, limits.pipe_wait_seconds, extra)
    refused = refusal(grant, command, text, result.exit_code)
    if refused is not None and not result.timed_out:
        raise refused
    if result.timed_out:
        raise ToolError(
            errors.TIMEOUT,
            f"the command was still running after {timeout_ms} ms; its process group was "
            "stopped (SIGTERM, then SIGKILL)",
            f"pass a larger timeout_ms (at most {ctx.config.shell.max_timeout_ms}), or start "
            "it with run_in_background and read it with job_output",
            partial_text=text,
        )
    moved = follow_cd(ctx, result.final_cwd, cwd)
    if moved:
        text += "\n" + moved
    return ToolOutput(text)


async def start_background(ctx: ToolContext, command: str, arguments: dict[str, Any]) -> ToolOutput:
    cwd, note = working_folder(ctx)
    prepared = prepare(ctx, command, arguments, cwd)
    manager = job_manager(ctx)
    if manager.running_count() >= manager.max_running:
        raise ToolError(
            errors.JOB_LIMIT,
            f"{manager.running_count()} background jobs are running already",
            "stop one with job_kill (job_output shows their state) and start this again",
        )
    limits = run_limits(ctx, ctx.config.shell.max_timeout_ms)

    window = await command_checkpoint(ctx, command, prepared.plan.needs_checkpoint)
    proxy = await open_network_proxy(ctx, prepared.plan)

    started: list[Job] = []
    before = protected_present(prepared)

    async def ended() -> None:
        """When the job ends or is killed: protected names it made set aside, its
        checkpoint, then its proxy; what they have to say (a failed checkpoint, unrecorded
        files, blocked hosts) joins the job's note."""
        aside = []
        if started:
            aside = await anyio.to_thread.run_sync(block_new_protected, prepared, before)
        try:
            if window is not None:
                await window.close()
        finally:
            if proxy is not None:
                await proxy.close()
        said = [
            *aside,
            *(window.window.notes if window is not None else []),
            *blocked_notes(proxy),
        ]
        if said and started:
            job = started[0]
            job.note = "; ".join([*([job.note] if job.note else []), *(n[1:-1] for n in said)])

    async def notify(params: dict[str, Any]) -> None:
        update = JobUpdateParams(
            job_id=params["jobId"],
            session=params["session"],
            status=params["status"],
            exit_code=params.get("exitCode"),
            new_bytes=params["newBytes"],
        )
        ctx.client.notify(TOOLHOST_JOB_UPDATE, update)

    try:
        job = await manager.start(
            command,
            cwd,
            ctx.session.id,
            limits,
            notify,
            on_end=ended,
            launcher=prepared.launcher(proxy),
            terminal=bool(arguments.get("terminal", False)),
        )
        job.sandbox = str(arguments.get("sandbox", "default"))
        if window is not None and job.pid is not None:
            window.claim(job.pid)
        started.append(job)
    except BaseException as exc:
        await ended()
        if not isinstance(exc, OSError):
            raise
        raise ToolError(
            errors.INTERNAL_ERROR,
            f"the shell could not be started: {exc}",
            "check that bash or sh is installed and the working folder exists",
        ) from exc
    folder = ctx.workspace.relative(cwd)
    text = (
        f'Started background job "{job.id}" (pid {job.pid}) in '
        f"{'the workspace root' if folder == '.' else folder}. Read its output with job_output "
        f'{{"job_id": "{job.id}"}} (wait, filter); stop it with job_kill.'
    )
    said = window.window.notes if window is not None else []
    notes = "".join(f"\n{line}" for line in (note, prepared.notice, *said) if line)
    return ToolOutput(text + notes)


def launch(config: Config, args: Mapping[str, Any]) -> ShellLaunch:
    """How a call runs: in the background, or in the foreground with its timeout."""
    if args.get("run_in_background", False):
        return ShellLaunch(background=True, timeout_ms=None)
    shell = config.shell
    timeout_ms: int = args.get("timeout_ms", min(shell.default_timeout_ms, shell.max_timeout_ms))
    return ShellLaunch(background=False, timeout_ms=timeout_ms)


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    command: str = args["command"]
    check_command(command)
    how = launch(ctx.config, args)
    if how.background or how.timeout_ms is None:
        return await start_background(ctx, command, args)
    return await execute(ctx, command, how.timeout_ms, args)


TOOLS = (Tool(CONTRACT, run, shell_launch=launch),)
