"""Starting a command with one pipe for stdout and stderr, read without back-pressure.

Both streams share a single pipe, so output keeps its arrival order. The read end is
ours (not an asyncio StreamReader): we decide when to stop waiting for processes that
still hold it, and closing it never waits for them. What the command's terminal echoes of
typed input is read from the terminal, not the pipe: no order holds between the two (the
kernel echoes in a work queue of its own, and a program may print its next prompt first),
so it can go to a sink of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from lsp_server.shell.terminal import CommandInput

Sink = Callable[[bytes], None]

# Linux's F_SETPIPE_SZ: a 1 MiB pipe means fewer event-loop wake-ups for chatty commands.
_F_SETPIPE_SZ = 1031
_PIPE_BYTES = 1 << 20


class _PipeProtocol(asyncio.Protocol):
    def __init__(self, sink: Sink, closed: asyncio.Future[None], echo: bool = False) -> None:
        self.sink = sink
        self.echo = echo
        """It reads the echo of typed input (a plain command's terminal)."""
        self._closed = closed

    def data_received(self, data: bytes) -> None:
        self.sink(data)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._closed.done():
            self._closed.set_result(None)


class OutputPipe:
    """The read end of a command's output pipe; `closed` resolves at end of file."""

    def __init__(
        self,
        transports: list[tuple[asyncio.ReadTransport, _PipeProtocol]],
        closed: asyncio.Future[None],
    ) -> None:
        self._transports = transports
        self.closed = closed

    def redirect(self, sink: Sink, echo: Sink | None = None) -> None:
        """Send what arrives from now on to `sink`, the echo of typed input to `echo` when
        given (a foreground command became a job)."""
        for _, protocol in self._transports:
            protocol.sink = echo if protocol.echo and echo is not None else sink

    async def wait_closed(self, seconds: float) -> bool:
        """True when every writer closed the pipe within `seconds`."""
        if self.closed.done():
            return True
        try:
            await asyncio.wait_for(asyncio.shield(self.closed), seconds)
        except TimeoutError:
            return False
        return True

    def close(self) -> None:
        """Stop reading; writers that remain get SIGPIPE/EPIPE on their next write."""
        for transport, _ in self._transports:
            transport.close()


async def start_process(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    sink: Sink,
    preexec: Callable[[], None] | None = None,
    stdin: CommandInput | None = None,
    echo: Sink | None = None,
) -> tuple[asyncio.subprocess.Process, OutputPipe]:
    """Start `argv` in a new session (no controlling terminal), stdin from `stdin` (a
    terminal toolhost holds; None: /dev/null); `preexec` runs in the child before exec (the
    parent-death signal). A `stdin.terminal` command writes to its terminal as well (its
    echo is its output); a plain one's echo of typed input goes to `echo`, else to `sink`."""
    if stdin is not None and preexec is not None:  # no launcher: bash leads its session
        preexec = _no_hangup(preexec)
    if stdin is not None and stdin.terminal:
        return await _start_in_terminal(argv, cwd, env, sink, preexec, stdin)
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    with contextlib.suppress(OSError):  # not Linux, or over /proc/sys/fs/pipe-max-size
        fcntl.fcntl(write_fd, _F_SETPIPE_SZ, _PIPE_BYTES)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.DEVNULL if stdin is None else stdin.slave,
            stdout=write_fd,
            stderr=write_fd,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            preexec_fn=preexec,
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
        if stdin is not None:
            stdin.started()
    closed: asyncio.Future[None] = loop.create_future()
    readers = [read_fd] if stdin is None else [read_fd, stdin.reader()]
    return process, await _read(process, readers, sink, closed, echo)


def _no_hangup(preexec: Callable[[], None] | None) -> Callable[[], None]:
    """Started without a launcher, bash leads its session and takes the terminal on its
    stdin as its controlling terminal (it opens ttyname(0) when /dev/tty fails); its exit
    would then hang up whatever it left running: the command ignores SIGHUP, so leftovers
    are found and reported. (bwrap and the supervisor start it below a session leader of
    their own, which never opens the terminal.)"""

    def hook() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        if preexec is not None:
            preexec()

    return hook


async def _start_in_terminal(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    sink: Sink,
    preexec: Callable[[], None] | None,
    stdin: CommandInput,
) -> tuple[asyncio.subprocess.Process, OutputPipe]:
    """stdin, stdout and stderr are the terminal; its master end is the output."""
    loop = asyncio.get_running_loop()
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=stdin.slave,
            stdout=stdin.slave,
            stderr=stdin.slave,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            preexec_fn=preexec,
        )
    finally:
        stdin.started()
    closed: asyncio.Future[None] = loop.create_future()
    return process, await _read(process, [stdin.reader()], sink, closed)


async def _read(
    process: asyncio.subprocess.Process,
    fds: list[int],
    sink: Sink,
    closed: asyncio.Future[None],
    echo: Sink | None = None,
) -> OutputPipe:
    """Read every descriptor into `sink`, the ones after the first (a plain command's
    terminal: the echo) into `echo` when given; `closed` is the first one's end of file (a
    terminal's master reports its end as EIO, which asyncio takes as the end too)."""
    loop = asyncio.get_running_loop()
    transports: list[tuple[asyncio.ReadTransport, _PipeProtocol]] = []
    others: asyncio.Future[None] = loop.create_future()
    files = [os.fdopen(fd, "rb", buffering=0) for fd in fds]
    try:
        for index, reader in enumerate(files):
            done = closed if index == 0 else others
            to = echo if index > 0 and echo is not None else sink
            protocol = _PipeProtocol(to, done, echo=index > 0)
            transport, _ = await loop.connect_read_pipe(lambda p=protocol: p, reader)  # type: ignore[misc]
            transports.append((transport, protocol))
    except BaseException:
        # Cancelled (or failed) between the start and the first read: the command is
        # already running and nobody else knows its pid yet.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        for transport, _ in transports:
            transport.close()
        for reader in files[len(transports) :]:
            reader.close()
        raise
    return OutputPipe(transports, closed)
