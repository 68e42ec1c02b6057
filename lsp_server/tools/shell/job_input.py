"""job_input: type text and keys into a running job, then show what it printed.

Text typed into a shell or interpreter is judged by the policy as the command it amounts
to (policy/commands/typed_input.py), through the tool's `judge`: dispatch approves it as a
bash call in the job's sandbox after job_input's own approval. Text for other programs
is data.
"""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING, Any

import anyio

from lsp_server.core import errors
from lsp_server.core.contract import (
    JSON_SCHEMA_DIALECT,
    ContractEntry,
    Hints,
    JudgedCommand,
    Tool,
)
from lsp_server.core.errors import ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.policy.commands.typed_input import judged_command
from lsp_server.runtime.context import ToolContext
from lsp_server.shell.prompts import PasswordAsker, PasswordRequest, answer_password
from lsp_server.shellparse.shell_words import split_command
from lsp_server.tools._support.secret_grant import job_password_asker
from lsp_server.tools.shell.bash import CONTRACT as BASH_CONTRACT
from lsp_server.tools.shell.bash import job_manager
from lsp_server.tools.shell.job_tools import find_job, render_read

if TYPE_CHECKING:
    from lsp_server.shell.jobs import Job, JobManager

_KEY_NAMES = ["enter", "ctrl-c", "ctrl-d", "tab", "up", "down", "esc"]
_DEFAULT_WAIT_MS = 5000
_MAX_WAIT_MS = 60_000
_STEP_SECONDS = 0.25
_SECRET_TIMEOUT_SECONDS = 300.0  # how long the user has to type a password the job asks for

CONTRACT = ContractEntry(
    name="job_input",
    hints=Hints(destructive=True, open_world=True),
    approval_verb="Type into job",
    read_only=False,
    kind="state",
    description=(
        "Type into a running job (a bash command that waits for input, or one started with "
        "run_in_background or terminal: true): `text` first, then `keys` in order. Then waits "
        "until the program waits for input again, ends, or wait_ms passes, and returns what "
        "it printed since (a terminal job: its screen). Text typed into a shell or an "
        "interpreter (bash, python3, node, psql ...) is approved like the command it runs."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["job_id"],
        "properties": {
            "job_id": {
                "type": "string",
                "pattern": "^bash-[0-9]+$",
                "description": 'The job to type into, e.g. "bash-3".',
            },
            "text": {
                "type": "string",
                "maxLength": 65536,
                "description": 'What to type; end a line with "\\n" to send it.',
            },
            "keys": {
                "type": "array",
                "maxItems": 32,
                "items": {"type": "string", "enum": _KEY_NAMES},
                "description": "Keys to press after the text, in order.",
            },
            "wait_ms": {
                "type": "integer",
                "minimum": 0,
                "maximum": _MAX_WAIT_MS,
                "description": f"How long to wait for the program (default {_DEFAULT_WAIT_MS}).",
            },
        },
    },
)


def _running_job(manager: JobManager, job_id: str) -> Job:
    job = find_job(manager, job_id)
    if not job.running or job.stdin is None or not job.stdin.open:
        raise ToolError(
            errors.INVALID_ARGUMENT,
            f"job {job.id} has ended {job.status_line()}; nothing reads input any more",
            f'read what it printed with job_output {{"job_id": "{job.id}"}}',
        )
    return job


async def _program_argv(job: Job) -> tuple[str, ...]:
    """Who reads what is typed: the waiting process, else the job's last interpreter."""
    from lsp_server.shell.prompts import waiting_reader
    from lsp_server.shell.waiting import command_line_of

    assert job.stdin is not None
    reader = await waiting_reader(job.pid, job.marker, job.stdin)
    if reader is not None:
        return await anyio.to_thread.run_sync(command_line_of, reader)
    return ()


def _command_programs(command: str) -> list[tuple[str, ...]]:
    return [segment.words for segment in split_command(command).segments if segment.words]


async def judge(ctx: ToolContext, args: dict[str, Any]) -> JudgedCommand | None:
    """The command typed text amounts to, when the job's reader is a shell or interpreter
    (the process waiting on its terminal, or any program of its command line)."""
    text = args.get("text") or ""
    if not text.strip():
        return None
    job = _running_job(job_manager(ctx), args["job_id"])
    candidates = [await _program_argv(job), *_command_programs(job.command)]
    for argv in candidates:
        command = judged_command(argv, text)
        if command is not None:
            who = argv[0].rsplit("/", 1)[-1] if argv else "the job"
            return JudgedCommand(
                BASH_CONTRACT,
                {
                    "command": command,
                    "sandbox": job.sandbox,
                    "description": f"typed into {who} (job {job.id})",
                },
                job.cwd,
            )
    return None


def _interrupt(job: Job) -> None:
    """ctrl-c on a terminal that is nobody's controlling terminal: SIGINT by hand, to the
    job's processes but its launcher (bwrap) and its top shell."""
    from lsp_server.shell import processes

    found = processes.find_processes(job.pid, job.marker)
    targets = [
        p
        for p in found
        if p.pid != job.pid and not p.command.startswith("bwrap") and "__toolhost_" not in p.command
    ]
    processes.send_signal(None, targets, signal.SIGINT)


async def _settle(
    manager: JobManager, job: Job, seconds: float, asker: PasswordAsker | None = None
) -> bool:
    """Until the job waits for input again or ends (True), or `seconds` pass (False); a
    password prompt (echo off) on the way goes to `asker` (the user), never to the model."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while job.running:
        left = deadline - loop.time()
        if left <= 0:
            return False
        await job.wait_change(min(left, _STEP_SECONDS))
        if await job.waiting_for_input() is not None:
            asked = PasswordRequest(job.prompt(), job.command, job.session, None, job.id)
            if await answer_password(manager.password_asker or asker, job.stdin, asked):
                job.quiet.touch()
                continue
            return True
    return True


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    manager = job_manager(ctx)
    text: str = args.get("text") or ""
    keys: list[str] = args.get("keys") or []
    if not text and not keys:
        raise ToolError(
            errors.INVALID_ARGUMENT,
            "nothing to type: give text, keys or both",
            'pass {"text": "yes\\n"} or {"keys": ["enter"]}',
        )
    job = _running_job(manager, args["job_id"])
    assert job.stdin is not None
    from lsp_server.shell.terminal import KEYS

    try:
        data = text.encode("utf-8", "surrogateescape")  # bytes a path held are typed back
    except UnicodeEncodeError:
        data = text.encode("utf-8", "replace")  # a lone surrogate: no byte can type it
    taken = job.stdin.write(data)
    for key in keys:
        if key == "ctrl-c":
            await anyio.to_thread.run_sync(_interrupt, job)
        taken += job.stdin.write(KEYS[key])
    job.quiet.touch()  # what it does with the input has yet to show
    wait_ms: int = args.get("wait_ms", _DEFAULT_WAIT_MS)
    asker = job_password_asker(ctx, _SECRET_TIMEOUT_SECONDS)
    settled = await _settle(manager, job, wait_ms / 1000, asker)
    read = manager.read(job, ctx.session.id)
    shown = render_read(job, read, waited_out=False, timeout_ms=wait_ms)
    notes = []
    sent = len(data) + sum(len(KEYS[k]) for k in keys)
    if taken < sent:
        notes.append(
            f"[the terminal took {taken} of {sent} bytes: the program has not read its "
            "earlier input; send the rest later]"
        )
    if job.running:
        if settled:
            notes.append(f"[waiting for input: `{job.prompt()}`]")
        else:
            notes.append(f"[still running after {wait_ms} ms; job_output reads on]")
    return ToolOutput("\n".join([shown, *notes]))


TOOLS = (Tool(CONTRACT, run, judge=judge),)
