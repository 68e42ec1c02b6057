"""A background job: a command that keeps running while the agent does other things,
its output in a rolling buffer (and, in a terminal, on a screen), its terminal open for
input (job_input). The job manager (jobs.py) starts, watches and ends them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import attrs

from lsp_server.shell.capture import RollingBuffer, shown_text
from lsp_server.shell.confinement import CommandState, Launcher
from lsp_server.shell.prompts import QUIET_SECONDS, QuietClock, waiting_reader
from lsp_server.shell.runner import RunLimits
from lsp_server.shell.screen import Screen
from lsp_server.shell.terminal import CommandInput
from lsp_server.shell.waiting import prompt_of

JobStatus = Literal["running", "exited", "killed", "failed"]
Notify = Callable[[dict[str, Any]], Awaitable[None]]
_PROMPT_BYTES = 400


@attrs.define(eq=False)
class Job:
    id: str
    session: str
    command: str
    cwd: Path
    marker: str
    limits: RunLimits
    output: RollingBuffer
    state: CommandState
    launcher: Launcher | None = None
    notify: Notify | None = None
    on_end: Callable[[], Awaitable[None]] | None = None
    """Runs once the job's processes are gone, before anyone sees it ended (checkpoints)."""
    started_at: float = attrs.Factory(time.time)
    status: JobStatus = "running"
    exit_code: int | None = None
    finished_at: float | None = None
    kill_reason: str | None = None
    note: str = ""
    """What happened to processes left behind when the job ended."""
    pid: int | None = None
    cursors: dict[str, int] = attrs.Factory(dict)
    stdin: CommandInput | None = None
    """The terminal the job reads (job_input types into it); None once it has ended."""
    screen: Screen | None = None
    """A `terminal: true` job's screen, fed with its output."""
    quiet: QuietClock = attrs.Factory(QuietClock)
    sandbox: str = "default"
    """The sandbox the bash call asked for: text typed into the job is judged as running there."""
    _changed: asyncio.Event = attrs.Factory(asyncio.Event)
    _watcher: asyncio.Task[None] | None = None
    _answer: bytes = b""
    """The end of what the program printed since input was last typed, without the echo of
    that input: where it shows what it asks now."""
    _answer_to: int = 0
    """The terminal's count of typed inputs `_answer` follows (CommandInput.typed)."""

    def feed(self, chunk: bytes) -> None:
        """What the program printed (a `terminal: true` job's terminal: all it shows)."""
        self._show(chunk)
        typed = self.stdin.typed if self.stdin is not None else self._answer_to
        if typed != self._answer_to:
            self._answer, self._answer_to = b"", typed
        self._answer = (self._answer + chunk[-_PROMPT_BYTES:])[-_PROMPT_BYTES:]

    def feed_echo(self, chunk: bytes) -> None:
        """What a plain job's terminal echoes of typed input. It arrives apart from the
        program's output, in either order: the program may have printed its next prompt
        before the echo comes."""
        self._show(chunk)

    def _show(self, chunk: bytes) -> None:
        self.output.append(chunk)
        if self.screen is not None:
            self.screen.feed(chunk)
        self.quiet.touch()
        self._signal_change()

    async def waiting_for_input(self) -> int | None:
        """The pid of a process of the job asleep reading its terminal (its output quiet
        for a moment: shell/prompts.py), or None."""
        if not self.running or self.stdin is None or self.quiet.quiet_for() < QUIET_SECONDS:
            return None
        return await waiting_reader(self.pid, self.marker, self.stdin)

    def prompt(self) -> str:
        """What the job shows where it waits: the last line it printed since input was last
        typed (not the echo of that input); when it printed nothing since, the last line of
        its output."""
        if self.screen is not None:
            lines = [line for line in self.screen.rows() if line.strip()]
            return prompt_of(lines[-1] if lines else "")
        answered = self.stdin is not None and self.stdin.typed != self._answer_to
        if self._answer.strip() and not answered:
            return prompt_of(shown_text(self._answer))
        data, _ = self.output.read_from(max(self.output.start, self.output.end - _PROMPT_BYTES))
        return prompt_of(shown_text(data))

    def _signal_change(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def wait_change(self, seconds: float) -> bool:
        """True when output or status changed within `seconds`."""
        if seconds <= 0:
            return False
        try:
            await asyncio.wait_for(self._changed.wait(), seconds)
        except TimeoutError:
            return False
        return True

    @property
    def running(self) -> bool:
        return self.status == "running"

    def status_line(self) -> str:
        if self.status == "exited":
            return f"[status: exited {self.exit_code}]"
        return f"[status: {self.status}]"

    def unread_bytes(self, session: str) -> int:
        return self.output.end - self.cursors.get(session, 0)

    def public(self) -> dict[str, Any]:
        """The job as listed by toolhost/status."""
        return {
            "jobId": self.id,
            "session": self.session,
            "command": self.command,
            "status": self.status,
            "exitCode": self.exit_code,
            "pid": self.pid,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "outputBytes": self.output.end,
        }
