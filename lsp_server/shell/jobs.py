"""Background jobs: commands that keep running while the agent does other things.

A job's output goes into a rolling buffer addressed by absolute byte offsets; each
session keeps its own cursor, so `job_output` returns what that session has not seen
yet. When the main process ends, leftovers are handled as for a foreground command.
Every job dies with its session or the server (`close_session`, `shutdown`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import attrs

from lsp_server.procs.children import parent_death_hook
from lsp_server.shell import processes
from lsp_server.shell.capture import RollingBuffer, shown_text
from lsp_server.shell.confinement import (
    CommandState,
    Launcher,
    end_command,
    read_leftovers,
)
from lsp_server.shell.environment import command_environment
from lsp_server.shell.job import Job, JobStatus, Notify
from lsp_server.shell.pipes import OutputPipe, start_process
from lsp_server.shell.processes import ProcessInfo
from lsp_server.shell.prompts import QUIET_SECONDS, Handover, PasswordAsker, QuietClock
from lsp_server.shell.runner import (
    RunLimits,
    command_argv,
    keeps_daemons,
    looks_daemonising,
    new_marker,
)
from lsp_server.shell.screen import Screen
from lsp_server.shell.terminal import TERMINAL_ENVIRONMENT, CommandInput

__all__ = ["Job", "JobManager", "JobRead", "JobStatus", "Notify"]

log = logging.getLogger(__name__)

_KEEP_FINISHED = 50


@attrs.frozen
class JobRead:
    text: str
    dropped_bytes: int
    matched_lines: int | None
    """With a filter: how many of the new lines matched."""
    total_lines: int | None


def _complete_lines(data: bytes, keep_partial: bool) -> tuple[bytes, int]:
    """The part of `data` to consume: up to the last newline when a partial line should
    wait for its end (a filtered read of a running job)."""
    if not keep_partial:
        return data, len(data)
    cut = data.rfind(b"\n") + 1
    return data[:cut], cut


def _leftover_note(what: str, leftovers: list[ProcessInfo]) -> str:
    names = ", ".join(p.describe() for p in leftovers)
    if what.startswith("left"):
        return f"{what}: {names}"
    return f"{what} {len(leftovers)} process(es) left when it ended: {names}"


class JobManager:
    """All background jobs of the server (a service: one instance, owned by the server)."""

    def __init__(self, max_running: int = 16) -> None:
        self._jobs: dict[str, Job] = {}
        self._counter = 0
        self._max_running = max_running
        self.password_asker: PasswordAsker | None = None
        """Set once by the composition root: who answers a password prompt (echo off) seen
        in a command's terminal, foreground or job (shell/prompts.py)."""

    def number_from(self, start: int) -> None:
        """Number the next jobs from `start` on (another runtime of this server numbers
        its own: the editor finds a job by its id alone)."""
        self._counter = max(self._counter, start)

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def jobs(self) -> list[Job]:
        return list(self._jobs.values())

    def running_count(self) -> int:
        return sum(1 for job in self._jobs.values() if job.running)

    @property
    def max_running(self) -> int:
        return self._max_running

    async def start(
        self,
        command: str,
        cwd: Path,
        session: str,
        limits: RunLimits,
        notify: Notify | None = None,
        on_end: Callable[[], Awaitable[None]] | None = None,
        launcher: Launcher | None = None,
        terminal: bool = False,
    ) -> Job:
        """Start `command` (sandboxed or supervised by the launcher; with `terminal`, in a
        terminal it writes to as well); raises OSError when it cannot be started."""
        self._counter += 1
        marker = new_marker()
        job = Job(
            id=f"bash-{self._counter}",
            session=session,
            command=command,
            cwd=cwd,
            marker=marker,
            limits=limits,
            output=RollingBuffer(limits.capture_bytes),
            state=CommandState.create(),
            launcher=launcher,
            notify=notify,
            on_end=on_end,
            stdin=CommandInput(terminal),
            screen=Screen() if terminal else None,
        )
        env = command_environment(marker, names=limits.credentials, askpass=limits.askpass)
        if terminal:
            env.update(TERMINAL_ENVIRONMENT)
        argv = command_argv(command, cwd, env, job.state, launcher, keeps_daemons(command, limits))
        preexec = parent_death_hook() if launcher is None else None
        try:
            process, pipe = await start_process(
                argv, cwd, env, job.feed, preexec, job.stdin, job.feed_echo
            )
        except BaseException:
            processes.kill_now(None, marker)  # cancelled while starting: nothing may stay
            if job.stdin is not None:
                job.stdin.close()
            end_command(job.state, launcher)
            raise
        return await self._begin(job, process, pipe)

    async def _begin(self, job: Job, process: asyncio.subprocess.Process, pipe: OutputPipe) -> Job:
        job.pid = process.pid
        self._jobs[job.id] = job
        self._prune_finished()
        job._watcher = asyncio.create_task(self._watch(job, process, pipe))
        await self._notify(job)
        return job

    async def adopt(
        self,
        handover: Handover,
        command: str,
        cwd: Path,
        session: str,
        limits: RunLimits,
        notify: Notify | None = None,
        on_end: Callable[[], Awaitable[None]] | None = None,
        launcher: Launcher | None = None,
    ) -> Job:
        """A foreground command that waits for input becomes a job, as it is: its output
        so far first, then what it prints from now on."""
        self._counter += 1
        job = Job(
            id=f"bash-{self._counter}",
            session=session,
            command=command,
            cwd=cwd,
            marker=handover.marker,
            limits=limits,
            output=RollingBuffer(limits.capture_bytes),
            state=handover.state,
            launcher=launcher,
            notify=notify,
            on_end=on_end,
            stdin=handover.stdin,
            screen=Screen() if handover.stdin.terminal else None,
        )
        job.feed(handover.output)
        job.quiet = QuietClock(time.monotonic() - QUIET_SECONDS)  # it waits already
        handover.pipe.redirect(job.feed, job.feed_echo)
        return await self._begin(job, handover.process, handover.pipe)

    async def _watch(self, job: Job, process: asyncio.subprocess.Process, pipe: OutputPipe) -> None:
        pgid = process.pid
        try:
            await process.wait()
            pipe_held = not await pipe.wait_closed(job.limits.pipe_wait_seconds)
            if job.launcher is not None:
                # Its PID namespace (or the supervisor) ended what it left behind.
                self._note_leftovers(job, job.launcher.namespace)
            else:
                await self._end_leftovers(job, pgid)
            if job.launcher is None and pipe_held and not job.note:
                job.note = "processes outside the job still held its output pipe"
            await pipe.wait_closed(1.0)
            job.exit_code = process.returncode
            job.status = "killed" if job.kill_reason is not None else "exited"
        except asyncio.CancelledError:
            processes.kill_now(pgid, job.marker)
            job.status = "killed"
            raise
        except Exception:
            log.exception("background job %s failed", job.id)
            processes.kill_now(pgid, job.marker)
            job.status = "failed"
        finally:
            pipe.close()
            if job.stdin is not None:
                job.stdin.close()
            if job.launcher is not None:  # placeholders go before the checkpoint looks
                job.launcher.release(job.state.folder)
            if job.on_end is not None:
                try:
                    await job.on_end()
                except Exception:
                    log.exception("the end hook of job %s failed", job.id)
            end_command(job.state, job.launcher)
            job.finished_at = time.time()
            job._signal_change()
        await self._notify(job)

    @staticmethod
    def _note_leftovers(job: Job, namespace: bool) -> None:
        leftovers = read_leftovers(job.state)
        if not leftovers:
            return
        if namespace or not keeps_daemons(job.command, job.limits):
            job.note = _leftover_note("killed", leftovers)
        else:
            job.note = _leftover_note("left running (the command daemonised them)", leftovers)

    async def _end_leftovers(self, job: Job, pgid: int) -> None:
        """Outside the sandbox: find what the job left (group and marker) and kill it,
        unless it plainly daemonised and the configuration keeps daemons."""
        leftovers = await anyio.to_thread.run_sync(processes.find_processes, pgid, job.marker)
        if not leftovers:
            return
        if job.limits.kill_daemons or not looks_daemonising(job.command):
            await processes.terminate(pgid, job.marker, job.limits.kill_grace_seconds)
            job.note = _leftover_note("killed", leftovers)
        else:
            job.note = _leftover_note("left running (the command daemonised them)", leftovers)

    async def _notify(self, job: Job) -> None:
        if job.notify is None:
            return
        params: dict[str, Any] = {
            "jobId": job.id,
            "session": job.session,
            "status": job.status,
            "newBytes": job.unread_bytes(job.session),
        }
        if job.exit_code is not None:
            params["exitCode"] = job.exit_code
        try:
            await job.notify(params)
        except Exception:
            # The client may be gone; the job's state is still right.
            log.debug("toolhost/jobUpdate for %s not delivered", job.id, exc_info=True)

    def _prune_finished(self) -> None:
        finished = [job for job in self._jobs.values() if not job.running]
        for job in finished[: max(len(finished) - _KEEP_FINISHED, 0)]:
            del self._jobs[job.id]

    def read(self, job: Job, session: str, pattern: re.Pattern[str] | None = None) -> JobRead:
        """New output since `session` last read, advancing its cursor; a terminal job's
        screen as it is now (without a filter)."""
        cursor = job.cursors.get(session, 0)
        if job.screen is not None and pattern is None:
            job.cursors[session] = job.output.end
            return JobRead(job.screen.text(scrollback=False), 0, None, None)
        data, dropped = job.output.read_from(cursor)
        consumed, size = _complete_lines(data, keep_partial=pattern is not None and job.running)
        job.cursors[session] = max(cursor, job.output.start) + size
        if pattern is None:
            return JobRead(shown_text(consumed), dropped, None, None)
        text = consumed.decode("utf-8", "replace")
        lines = text.splitlines()
        matched = [line for line in lines if pattern.search(line)]
        return JobRead("\n".join(matched), dropped, len(matched), len(lines))

    @staticmethod
    def _scan(job: Job, offset: int, pattern: re.Pattern[str]) -> tuple[bool, int]:
        """Whether complete lines from `offset` match; and the offset scanned up to, so a
        waiting caller never scans the same bytes twice."""
        data, _ = job.output.read_from(max(offset, job.output.start))
        consumed, size = _complete_lines(data, keep_partial=job.running)
        text = consumed.decode("utf-8", "replace")
        matched = any(pattern.search(line) for line in text.splitlines())
        return matched, max(offset, job.output.start) + size

    async def wait(
        self, job: Job, session: str, seconds: float, pattern: re.Pattern[str] | None
    ) -> bool:
        """Until the job ends, or (with a pattern) a new line matches, or time runs out.
        True when the wait ended for a reason other than the timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        scanned = job.cursors.get(session, 0)
        while True:
            if not job.running:
                return True
            if pattern is not None:
                matched, scanned = self._scan(job, scanned, pattern)
                if matched:
                    return True
            if not await job.wait_change(deadline - loop.time()):
                return False

    async def kill(self, job: Job, reason: str) -> bool:
        """Kill the job's processes; False when it had already finished."""
        if not job.running:
            return False
        job.kill_reason = reason
        await processes.terminate(job.pid, job.marker, job.limits.kill_grace_seconds)
        if job._watcher is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(job._watcher), 5.0)
        return True

    async def close_session(self, session: str) -> None:
        """Kill every running job of `session` (its client went away)."""
        await self._stop_all([job for job in self._jobs.values() if job.session == session])

    async def shutdown(self) -> None:
        """Kill every running job (server exit)."""
        await self._stop_all(list(self._jobs.values()))

    async def _stop_all(self, jobs: list[Job]) -> None:
        """Terminate jobs without touching their watcher tasks: at server exit this runs on
        a fresh event loop, after the one the watchers belonged to has gone."""
        running = [job for job in jobs if job.running]
        for job in running:
            job.kill_reason = "stopped with its session or the server"
        grace = max((job.limits.kill_grace_seconds for job in running), default=0.0)
        await asyncio.gather(*(processes.terminate(job.pid, job.marker, grace) for job in running))
        for job in running:
            if job.running:
                job.status = "killed"
                job.finished_at = time.time()

    def kill_all_now(self) -> None:
        """SIGKILL every running job without waiting (last resort at interpreter exit)."""
        for job in self._jobs.values():
            if job.running:
                processes.kill_now(job.pid, job.marker)

    def status(self) -> list[dict[str, Any]]:
        """Jobs for toolhost/status, running first."""
        jobs = sorted(self._jobs.values(), key=lambda j: (not j.running, j.started_at))
        return [job.public() for job in jobs]
