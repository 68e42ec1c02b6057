"""job_output and job_kill: reading and stopping background jobs started by bash."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from lsp_server.core import errors
from lsp_server.core.contract import JSON_SCHEMA_DIALECT, ContractEntry, Hints, Tool
from lsp_server.core.errors import ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.tools.shell.bash import MAX_TIMEOUT_MS, job_manager

if TYPE_CHECKING:
    from lsp_server.shell.jobs import Job, JobManager, JobRead

_JOB_ID = {
    "type": "string",
    "pattern": "^bash-[0-9]+$",
    "description": 'The id bash returned when it started the job, e.g. "bash-1".',
}

OUTPUT_CONTRACT = ContractEntry(
    name="job_output",
    core=True,
    read_only=True,
    kind="read",
    description=(
        "New output of a background job since this session last read it, then its status "
        "line `[status: running|exited N|killed|failed]`. With wait, blocks until the job "
        "ends, a new line matches filter (when given), or timeout_ms passes; the job keeps "
        "running either way."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["job_id"],
        "properties": {
            "job_id": _JOB_ID,
            "wait": {
                "type": "boolean",
                "description": "Wait for the job to end, or for a line matching filter "
                "(default false).",
            },
            "timeout_ms": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_TIMEOUT_MS,
                "description": "How long wait may block, in milliseconds (default 30000).",
            },
            "filter": {
                "type": "string",
                "description": "A regular expression (Python syntax): only new lines "
                "matching it are shown; the others are skipped, not kept for later.",
            },
        },
    },
)

KILL_CONTRACT = ContractEntry(
    name="job_kill",
    # A second kill of the same job succeeds ("already finished") and changes nothing.
    hints=Hints(destructive=True, idempotent=True),
    core=True,
    approval_verb="Stop job",
    read_only=False,
    kind="state",
    description=(
        "Stop a background job: its whole process group (and anything it daemonised) gets "
        "SIGTERM, then SIGKILL. Says so when the job had already finished; its output stays "
        "readable with job_output."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["job_id"],
        "properties": {
            "job_id": _JOB_ID,
            "reason": {"type": "string", "description": "Why the job is stopped (for the log)."},
        },
    },
)


def find_job(manager: JobManager, job_id: str) -> Job:
    job = manager.get(job_id)
    if job is None:
        known = ", ".join(j.id for j in manager.jobs()) or "none"
        raise ToolError(
            errors.JOB_NOT_FOUND,
            f"there is no background job {job_id!r} (known jobs: {known})",
            'start one with bash {"run_in_background": true}',
        )
    return job


def compile_filter(text: str | None) -> re.Pattern[str] | None:
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise ToolError(
            errors.INVALID_ARGUMENT,
            f"filter {text!r} is not a valid regular expression: {exc}",
            "escape special characters with a backslash (e.g. \\( or \\.), or pass a simpler "
            "pattern",
        ) from exc


def render_read(job: Job, read: JobRead, waited_out: bool, timeout_ms: int) -> str:
    lines: list[str] = []
    if read.dropped_bytes:
        lines.append(
            f"[{read.dropped_bytes} bytes of output were dropped before this: the job printed "
            "more than its buffer keeps between reads]"
        )
    if read.text:
        lines.append(read.text.rstrip("\n"))
    elif read.matched_lines is not None:
        lines.append("(no new line matched the filter)")
    else:
        lines.append("(no new output)")
    if read.matched_lines is not None:
        lines.append(f"[filter: {read.matched_lines} of {read.total_lines} new lines matched]")
    if waited_out:
        lines.append(f"[waited {timeout_ms} ms; the job is still running]")
    if job.note and not job.running:
        lines.append(f"[{job.note}]")
    lines.append(job.status_line())
    return "\n".join(lines)


async def run_output(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    manager = job_manager(ctx)
    pattern = compile_filter(args.get("filter"))
    job = find_job(manager, args["job_id"])
    timeout_ms: int = args.get("timeout_ms", 30_000)
    if timeout_ms > ctx.config.shell.max_timeout_ms:
        raise ToolError(
            errors.INVALID_ARGUMENT,
            f"timeout_ms {timeout_ms} is above the configured maximum of "
            f"{ctx.config.shell.max_timeout_ms}",
            "wait in several shorter calls",
        )
    waited_out = False
    if args.get("wait", False):
        waited_out = not await manager.wait(job, ctx.session.id, timeout_ms / 1000, pattern)
    read = manager.read(job, ctx.session.id, pattern)
    text = render_read(job, read, waited_out, timeout_ms)
    if await job.waiting_for_input() is not None:
        text += (
            f"\n[waiting for input: `{job.prompt()}` — answer with job_input "
            f'{{"job_id": "{job.id}", "text": "...\\n"}}]'
        )
    return ToolOutput(text)


async def run_kill(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    manager = job_manager(ctx)
    job = find_job(manager, args["job_id"])
    reason = args.get("reason") or "job_kill"
    if not await manager.kill(job, reason):
        return ToolOutput(
            f"Job {job.id} had already finished {job.status_line()}; nothing to kill. "
            "Its output stays readable with job_output."
        )
    return ToolOutput(
        f"Killed job {job.id} ({job.command[:80]}) {job.status_line()}. "
        "Its output stays readable with job_output."
    )


TOOLS = (Tool(OUTPUT_CONTRACT, run_output), Tool(KILL_CONTRACT, run_kill))
