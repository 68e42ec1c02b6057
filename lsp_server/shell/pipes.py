"""Starting a command with one pipe for stdout and stderr, read without back-pressure.

Both streams share a single pipe, so output keeps its arrival order. The read end is
ours (not an asyncio StreamReader): we decide when to stop waiting for processes that
still hold it, and closing it never waits for them.
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

Sink = Callable[[bytes], None]

# Linux's F_SETPIPE_SZ: a 1 MiB pipe means fewer event-loop wake-ups for chatty commands.
_F_SETPIPE_SZ = 1031
_PIPE_BYTES = 1 << 20


class _PipeProtocol(asyncio.Protocol):
    def __init__(self, sink: Sink, closed: asyncio.Future[None]) -> None:
        self._sink = sink
        self._closed = closed

    def data_received(self, data: bytes) -> None:
        self._sink(data)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._closed.done():
            self._closed.set_result(None)


class OutputPipe:
    """The read end of a command's output pipe; `closed` resolves at end of file."""

    def __init__(self, transport: asyncio.ReadTransport, closed: asyncio.Future[None]) -> None:
        self._transport = transport
        self.closed = closed

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
        self._transport.close()


async def start_process(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    sink: Sink,
    preexec: Callable[[], None] | None = None,
) -> tuple[asyncio.subprocess.Process, OutputPipe]:
    """Start `argv` in a new session (no controlling terminal), stdin from /dev/null;
    `preexec` runs in the child before exec (the parent-death signal)."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    with contextlib.suppress(OSError):  # not Linux, or over /proc/sys/fs/pipe-max-size
        fcntl.fcntl(write_fd, _F_SETPIPE_SZ, _PIPE_BYTES)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.DEVNULL,
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
    closed: asyncio.Future[None] = loop.create_future()
    reader = os.fdopen(read_fd, "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(lambda: _PipeProtocol(sink, closed), reader)
    except BaseException:
        # Cancelled (or failed) between the start and the first read: the command is
        # already running and nobody else knows its pid yet.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        reader.close()
        raise
    return process, OutputPipe(transport, closed)
