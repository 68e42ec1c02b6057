"""Running one shell command to completion without ever hanging the caller.

The command runs as `bash -c` in a session of its own with stdin from /dev/null and the
non-interactive environment. The caller gets the combined output (bounded: head and tail
kept, the rest counted), the exit code, the folder the command ended in, and a list of
what it left behind. On timeout the whole group is terminated; on cancellation it is
killed at once.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import anyio
import attrs

from lsp_server.procs.children import parent_death_hook
from lsp_server.secrets.names import CredentialNames
from lsp_server.shell import processes
from lsp_server.shell.capture import HeadTailCapture, shown_text
from lsp_server.shell.confinement import (
    CommandState,
    Launcher,
    end_command,
    exit_trap,
    read_leftovers,
)
from lsp_server.shell.environment import command_environment, shell_program
from lsp_server.shell.pipes import start_process
from lsp_server.shell.processes import ProcessInfo
from lsp_server.shell.prompts import Handover, PasswordPrompt, QuietClock, wait_for_end
from lsp_server.shell.screen import render as render_screen
from lsp_server.shell.terminal import TERMINAL_ENVIRONMENT, CommandInput
from lsp_server.shell.waiting import prompt_of as waiting_prompt

# Words that say the command meant to leave something running.
_DAEMONISING = re.compile(r"(?<![\w-])(nohup|setsid|disown)(?![\w-])")
_PROGRESS_SECONDS = 0.5
_DRAIN_SECONDS = 1.0

ProgressCallback = Callable[[str], Awaitable[None]]


@attrs.frozen
class RunLimits:
    timeout_seconds: float
    kill_grace_seconds: float = 2.0
    pipe_wait_seconds: float = 2.0
    capture_bytes: int = 8 * 1024 * 1024
    kill_daemons: bool = True
    credentials: CredentialNames = attrs.Factory(CredentialNames)
    """Which variables of the server's environment the command does not get."""
    askpass: Mapping[str, str] | None = None
    """A grant's variables: password prompts go to the user (secrets/askpass.py)."""


@attrs.define
class CommandResult:
    output: str
    """Decoded output; where bytes were dropped it says so in place."""
    exit_code: int | None
    """None after a timeout; negative: killed by that signal."""
    timed_out: bool
    total_bytes: int
    dropped_bytes: int
    final_cwd: Path | None
    """The folder the shell ended in (None when it could not tell)."""
    leftovers: list[ProcessInfo]
    """Processes still running after the command ended (or at the timeout)."""
    leftovers_killed: bool
    daemonised: bool
    """The command plainly meant to leave processes behind (nohup, setsid, disown)."""
    pipe_held: bool
    """Processes still held the output pipe when we stopped waiting for them."""
    handover: Handover | None = None
    """The command waits for input and still runs: for the job manager to adopt."""


def looks_daemonising(command: str) -> bool:
    return _DAEMONISING.search(command) is not None


def new_marker() -> str:
    return f"{os.getpid()}-{uuid.uuid4().hex[:12]}"


def decode_capture(capture: HeadTailCapture) -> str:
    """The kept head and tail, with the dropped middle named in place."""
    if capture.dropped == 0:
        return shown_text(capture.head() + capture.tail())
    head = shown_text(capture.head())
    tail = shown_text(capture.tail())
    kept = f"the first {len(capture.head())} and the last {len(capture.tail())} are kept"
    breaks = capture.dropped_newlines()
    if breaks == 0:  # the gap is inside one line: say so in place, on that line
        gap = f" [... {capture.dropped} bytes of this line dropped here ({kept}) ...] "
    else:
        gap = (
            f"\n[... {capture.dropped} bytes of output dropped here ({breaks} line breaks): "
            f"the command printed {capture.total} bytes, {kept} ...]\n"
        )
    return head + gap + tail


LONG_COMMAND_BYTES = 64 * 1024
"""A command longer than this goes to bash through a file in its own folder: Linux refuses
one argument of 128 KiB or more (`Argument list too long`, MAX_ARG_STRLEN)."""


def shell_script(
    state: CommandState | None, sandboxed: bool = False, from_file: bool = False
) -> str:
    """The script `bash -c` runs; the command itself is its first argument (`from_file`: the
    path of a file that holds it).

    An EXIT trap records the final folder even when the command ends with `exit N` (and,
    in the sandbox, what is still running). `eval` of the argument keeps the command's own
    line numbers in error messages and keeps our wrapper out of them.
    """
    trap = "" if state is None else exit_trap(state, sandboxed)
    take = '__toolhost_command=$(cat -- "$1")' if from_file else "__toolhost_command=$1"
    return trap + take + '; shift; eval "$__toolhost_command"'


def keeps_daemons(command: str, limits: RunLimits) -> bool:
    """Leftovers of a command that plainly daemonised stay when shell.kill_daemons is off."""
    return not limits.kill_daemons and looks_daemonising(command)


def command_argv(
    command: str,
    cwd: Path,
    env: dict[str, str],
    state: CommandState,
    launcher: Launcher | None,
    keep_daemons: bool = False,
) -> list[str]:
    """bash -c with our script, wrapped by the launcher (sandbox or supervisor) if any."""
    in_namespace = launcher is not None and launcher.namespace
    argument = command
    long = len(command.encode("utf-8", "surrogateescape")) > LONG_COMMAND_BYTES
    if long:  # the folder is the command's own (0700), and bound into the sandbox
        argument = str(state.folder / "command")
        Path(argument).write_text(command, encoding="utf-8", errors="surrogateescape")
    argv = [*shell_program(env), shell_script(state, in_namespace, long), "bash", argument]
    if launcher is None:
        return argv
    return launcher.wrap(argv, cwd, state.folder, keep_daemons)


def _read_cwd(cwd_file: Path) -> Path | None:
    try:
        text = cwd_file.read_text(errors="replace").strip()
    except OSError:
        return None
    return Path(text) if text.startswith("/") else None


async def _report_progress(capture: HeadTailCapture, report: ProgressCallback) -> None:
    """Every half second, the last complete line printed since the previous report."""
    seen = 0
    while True:
        await asyncio.sleep(_PROGRESS_SECONDS)
        if capture.total == seen:
            continue
        seen = capture.total
        lines = capture.last_bytes(400).decode("utf-8", "replace").splitlines()
        line = next((text.strip() for text in reversed(lines) if text.strip()), "")
        if line:
            await report(line[:200])


async def run_command(
    command: str,
    cwd: Path,
    limits: RunLimits,
    *,
    on_progress: ProgressCallback | None = None,
    marker: str | None = None,
    launcher: Launcher | None = None,
    terminal: bool = False,
    interactive: bool = False,
    on_password_prompt: PasswordPrompt | None = None,
    on_started: Callable[[int], None] | None = None,
) -> CommandResult:
    """Run `command` in `cwd` (sandboxed or supervised by the launcher); raises only on a
    failure to start (OSError) or when the caller is cancelled, in which case every
    process of the command is killed first. `interactive`: its stdin is a terminal toolhost
    holds (else /dev/null; with `terminal` its stdout too), and when it waits for input the
    result's `handover` holds it, still running, for the job manager to adopt.
    `on_started` is told the pid of the command's first process."""
    marker = marker or new_marker()
    capture = HeadTailCapture(limits.capture_bytes)
    clock = QuietClock()
    state = CommandState.create()
    env = command_environment(marker, names=limits.credentials, askpass=limits.askpass)
    if terminal:
        env.update(TERMINAL_ENVIRONMENT)
    keep = keeps_daemons(command, limits)
    argv = command_argv(command, cwd, env, state, launcher, keep)
    preexec = parent_death_hook() if launcher is None else None
    ticker: asyncio.Task[None] | None = None
    process = None
    pipe = None
    stdin = CommandInput(terminal) if interactive or terminal else None
    handover: Handover | None = None

    def feed(chunk: bytes) -> None:
        capture.feed(chunk)
        clock.touch()

    def prompt_text() -> str:
        return prompt_of(decode_capture(capture), terminal)

    try:
        process, pipe = await start_process(argv, cwd, env, feed, preexec, stdin)
        pgid = process.pid
        if on_started is not None:
            on_started(process.pid)
        if on_progress is not None:
            ticker = asyncio.create_task(_report_progress(capture, on_progress))
        timed_out = False
        try:
            reader = await wait_for_end(
                process,
                stdin,
                marker,
                clock,
                limits.timeout_seconds,
                prompt_text,
                on_password_prompt,
            )
        except TimeoutError:
            timed_out = True
        else:
            if reader is not None and stdin is not None:
                output = capture.head() + capture.tail()
                handover = Handover(process, pipe, stdin, state, marker, reader, output)
                return waiting_result(handover, decode_capture(capture), capture, command)
        if stdin is not None:  # the command ended: no more input
            stdin.close()
        if timed_out:
            leftovers = await processes.terminate(pgid, marker, limits.kill_grace_seconds)
            await pipe.wait_closed(_DRAIN_SECONDS)
            pipe_held = False
            killed = True
        elif launcher is not None:
            # The PID namespace (or the supervisor) ended what the shell left behind.
            leftovers = read_leftovers(state)
            pipe_held = not await pipe.wait_closed(limits.pipe_wait_seconds)
            killed = bool(leftovers) and (launcher.namespace or not keep)
        else:
            # Grandchildren may still hold the pipe (`sleep 100 &`): wait a bounded time.
            pipe_held = not await pipe.wait_closed(limits.pipe_wait_seconds)
            leftovers = await anyio.to_thread.run_sync(processes.find_processes, pgid, marker)
            killed = bool(leftovers) and (limits.kill_daemons or not looks_daemonising(command))
            if killed:
                await processes.terminate(pgid, marker, limits.kill_grace_seconds)
                await pipe.wait_closed(_DRAIN_SECONDS)
        text = decode_capture(capture)
        return CommandResult(
            output=render_screen(capture.head() + capture.tail()) if terminal else text,
            exit_code=None if timed_out else process.returncode,
            timed_out=timed_out,
            total_bytes=capture.total,
            dropped_bytes=capture.dropped,
            final_cwd=None if timed_out else _read_cwd(state.cwd_file),
            leftovers=leftovers,
            leftovers_killed=killed,
            daemonised=looks_daemonising(command),
            pipe_held=pipe_held,
        )
    except BaseException:
        # Cancellation ($/cancelRequest) or an internal error: nothing may survive it. The
        # marker finds the command's processes even when it was cancelled while starting.
        processes.kill_now(process.pid if process is not None else None, marker)
        handover = None
        raise
    finally:
        if ticker is not None:
            ticker.cancel()
        if handover is None:
            if pipe is not None:
                pipe.close()
            if stdin is not None:
                stdin.close()
            end_command(state, launcher)


def prompt_of(output: str, terminal: bool) -> str:
    """The prompt the command left: the last line it printed (on a terminal: as shown)."""
    if terminal:
        lines = [line for line in render_screen(output.encode()).splitlines() if line.strip()]
        return waiting_prompt(lines[-1] if lines else "")
    return waiting_prompt(output)


def waiting_result(
    handover: Handover, output: str, capture: HeadTailCapture, command: str
) -> CommandResult:
    return CommandResult(
        output=output,
        exit_code=None,
        timed_out=False,
        total_bytes=capture.total,
        dropped_bytes=capture.dropped,
        final_cwd=None,
        leftovers=[],
        leftovers_killed=False,
        daemonised=looks_daemonising(command),
        pipe_held=False,
        handover=handover,
    )


def describe_exit(exit_code: int | None) -> str:
    if exit_code is None:
        return "no exit code"
    if exit_code < 0:
        try:
            name = signal.Signals(-exit_code).name
        except ValueError:
            name = f"signal {-exit_code}"
        return f"killed by {name}"
    return f"exit code {exit_code}"
