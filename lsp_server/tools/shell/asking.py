"""A foreground bash command that asks something becomes a background job the agent
answers with job_input (lsp_server/shell/prompts.py sees the moment); what the command
holds (its checkpoint, its proxy, its askpass grant) is closed when the job ends."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from lsp_server.core.tool_output import ToolOutput
from lsp_server.protocol import TOOLHOST_JOB_UPDATE, JobUpdateParams
from lsp_server.runtime.context import ToolContext
from lsp_server.tools.shell.protected_made import ProtectedBefore
from lsp_server.tools.shell.sandboxing import (
    PreparedCommand,
    block_new_protected,
    blocked_notes,
)

if TYPE_CHECKING:
    from lsp_server.checkpoints.shell_calls import OpenCommand
    from lsp_server.sandbox.netproxy import NetworkProxy
    from lsp_server.shell.confinement import Launcher
    from lsp_server.shell.jobs import Job, JobManager
    from lsp_server.shell.runner import CommandResult, RunLimits


def job_notifier(ctx: ToolContext) -> Callable[[dict[str, Any]], Awaitable[None]]:
    """toolhost/jobUpdate to the client when a job starts or ends."""

    async def notify(params: dict[str, Any]) -> None:
        update = JobUpdateParams(
            job_id=params["jobId"],
            session=params["session"],
            status=params["status"],
            exit_code=params.get("exitCode"),
            new_bytes=params["newBytes"],
        )
        ctx.client.notify(TOOLHOST_JOB_UPDATE, update)

    return notify


def waiting_message(job: Job, prompt: str, text: str) -> str:
    """What the model reads: what the program asked and how to answer."""
    shown = prompt or "(it printed no prompt)"
    lines = [text.rstrip("\n")] if text.strip() else []
    lines.append(
        f"[waiting for input: `{shown}` — the command still runs as background job "
        f'"{job.id}"; answer with job_input {{"job_id": "{job.id}", "text": "...\\n"}} '
        '(keys: ["enter"], ["ctrl-d"] ends its input, ["ctrl-c"] interrupts), read it with '
        "job_output, stop it with job_kill]"
    )
    return "\n".join(lines)


async def adopt_waiting(
    ctx: ToolContext,
    manager: JobManager,
    command: str,
    cwd: Path,
    limits: RunLimits,
    prepared: PreparedCommand,
    result: CommandResult,
    held: tuple[OpenCommand | None, NetworkProxy | None, ProtectedBefore | None],
    launcher: Launcher,
    closers: list[Callable[[], None]],
) -> ToolOutput:
    """Make the waiting command a job; its checkpoint, proxy and `closers` end with it."""
    window, proxy, before = held
    started: list[Job] = []

    async def ended() -> None:
        aside = await anyio.to_thread.run_sync(block_new_protected, prepared, before)
        try:
            for close in closers:
                close()
            if window is not None:
                await window.close()
        finally:
            if proxy is not None:
                await proxy.close()
        said = [*aside, *(window.window.notes if window else []), *blocked_notes(proxy)]
        if said and started:
            job = started[0]
            job.note = "; ".join([*([job.note] if job.note else []), *(n[1:-1] for n in said)])

    assert result.handover is not None
    job = await manager.adopt(
        result.handover,
        command,
        cwd,
        ctx.session.id,
        limits,
        job_notifier(ctx),
        on_end=ended,
        launcher=launcher,
    )
    job.sandbox = str(prepared.plan.sandbox.requested)
    started.append(job)
    job.cursors[ctx.session.id] = job.output.end  # the model reads it below
    text = result.output
    if job.screen is not None:
        text = job.screen.text()
    return ToolOutput(waiting_message(job, job.prompt(), text))
