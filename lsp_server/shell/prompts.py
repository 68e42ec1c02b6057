"""A foreground command that asks something: seen while it runs, handed over as a job.

While a foreground command runs, toolhost watches for the moment it waits for input: its
output has been quiet for QUIET_SECONDS and one of its processes sleeps reading the
terminal toolhost holds as its stdin (shell/waiting.py). Then the caller gets the live
command back (`Handover`) instead of waiting for the timeout, and makes it a background
job that `job_input` can answer. A password prompt (echo off: shell/terminal.py) goes to
`on_password_prompt` first, when the caller gives one: what it returns is typed, and the
model never sees it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import anyio
import attrs

from lsp_server.shell import processes
from lsp_server.shell.confinement import CommandState
from lsp_server.shell.pipes import OutputPipe
from lsp_server.shell.terminal import CommandInput
from lsp_server.shell.waiting import reader_of

QUIET_SECONDS = 1.0
"""How long output must rest before toolhost looks whether the command waits for input."""
_LOOK_SECONDS = 0.25

PasswordPrompt = Callable[[str], Awaitable[str | None]]
"""Given the prompt a program showed with echo off, the answer to type (without the
newline), or None to leave the prompt to the model as any other."""


@attrs.frozen
class PasswordRequest:
    """A password prompt seen in a command's terminal (echo off), for whoever asks the user."""

    prompt: str
    command: str
    session: str
    call_id: str | None
    """The bash call that started the command (a foreground command, or a job's first)."""
    job_id: str | None
    """None while the command still runs in the foreground."""


PasswordAsker = Callable[[PasswordRequest], Awaitable[str | None]]
"""THE hook for password prompts in terminals: JobManager.password_asker (None: such a
prompt reaches the model as any other). It returns what to type (never shown), or None."""


async def answer_password(
    asker: PasswordAsker | None, stdin: CommandInput | None, request: PasswordRequest
) -> bool:
    """When the program waits with echo off and an asker is set: ask, type the answer."""
    if asker is None or stdin is None or not stdin.echo_off():
        return False
    answer = await asker(request)
    if answer is None:
        return False
    stdin.write(answer.encode("utf-8", "surrogateescape") + b"\n")
    return True


@attrs.define
class QuietClock:
    """When the command last printed."""

    last: float = attrs.Factory(time.monotonic)

    def touch(self) -> None:
        self.last = time.monotonic()

    def quiet_for(self) -> float:
        return time.monotonic() - self.last


@attrs.define(eq=False)
class Handover:
    """A foreground command that waits for input, alive, for the job manager to adopt."""

    process: asyncio.subprocess.Process
    pipe: OutputPipe
    stdin: CommandInput
    state: CommandState
    marker: str
    reader_pid: int
    """The process that waits to read."""
    output: bytes
    """What it printed so far (head and tail, as the foreground capture kept it)."""


async def waiting_reader(pgid: int | None, marker: str, stdin: CommandInput) -> int | None:
    """The pid of a process of the command asleep reading its stdin, or None."""
    if not stdin.open:
        return None

    def look() -> int | None:
        found = processes.find_processes(pgid, marker)
        return reader_of((p.pid for p in found), stdin.identity)

    return await anyio.to_thread.run_sync(look)


async def wait_for_end(
    process: asyncio.subprocess.Process,
    stdin: CommandInput | None,
    marker: str,
    clock: QuietClock,
    timeout: float,
    prompt_text: Callable[[], str],
    on_password_prompt: PasswordPrompt | None = None,
) -> int | None:
    """Until the command ends (None) or waits for input (the reader's pid); TimeoutError
    after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    ended = asyncio.ensure_future(process.wait())
    try:
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError
            await asyncio.wait({ended}, timeout=min(left, _LOOK_SECONDS))
            if ended.done():
                return None
            if stdin is None or clock.quiet_for() < QUIET_SECONDS:
                continue
            reader = await waiting_reader(process.pid, marker, stdin)
            if reader is None or ended.done():
                continue
            if on_password_prompt is not None and stdin.echo_off():
                answer = await on_password_prompt(prompt_text())
                if answer is not None:
                    stdin.write(answer.encode("utf-8", "surrogateescape") + b"\n")
                    clock.touch()
                    continue
            return reader
    finally:
        if not ended.done():
            ended.cancel()
