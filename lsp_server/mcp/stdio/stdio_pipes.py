"""The client's stdin and stdout as `toolhost mcp`'s front serves them (mcp/stdio/front.py): read
on the event loop, written from a worker thread, claimed from the process while served."""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import stat
import sys
import threading
from typing import TYPE_CHECKING, Any

from lsp_server.mcp.sdk_json import encode
from lsp_server.wire.private_stdio import private_stdio

if TYPE_CHECKING:
    from lsp_server.mcp.stdio.fast import FastPath

# The SDK's own transport reads a line of any length; so does the front (a cap would turn a
# big write_file into a parse error that it was not before).
LINE_LIMIT = sys.maxsize


class Pipes:
    """The client's stdin, read on the event loop (no thread hop per line), and stdout,
    written from a worker thread: the loop sleeps while an answer goes out, and on a loaded
    2-core machine the scheduler then wakes it promptly for the next request (written on the
    loop, the server rarely slept between calls and waited its turn like a CPU-bound task:
    docs/BENCHMARKS.md). While they are served, fd 0 reads the null device and fd 1 writes
    to stderr, so that nothing else in the process (or a child) reads or writes the wire."""

    def __init__(self, reader: asyncio.StreamReader, out_fd: int) -> None:
        self.reader = reader
        self.out_fd = out_fd
        self.pending: list[bytes] = []
        """Lines the front read before the SDK was loaded, oldest first (b"": end of input)."""
        self.answered: list[Any] = []
        """Ids of the requests the front answered; the SDK's answers to them are dropped."""
        self.fast: FastPath | None = None
        """Runs the plain tools/calls it takes, from the first line after `initialize`."""
        self._reading: asyncio.Future[bytes] | None = None
        self._writing = threading.Lock()  # one message at a time: answers come from tasks

    def next_line(self) -> asyncio.Future[bytes]:
        """The read of the next line, started once and shared until it is taken."""
        if self._reading is None:
            self._reading = asyncio.ensure_future(self._read_line())
        return self._reading

    async def read_line(self) -> bytes:
        """The next line; b"" at end of input."""
        line = await self.next_line()
        self._reading = None
        return line

    async def _read_line(self) -> bytes:
        """A line over LINE_LIMIT (none in practice) is read to its end and returned cut, so
        the SDK answers it as a parse error."""
        try:
            return await self.reader.readline()
        except ValueError:  # over the limit: the reader dropped what it had
            while not (rest := await self.reader.readline()).endswith(b"\n") and rest:
                pass
            return b"{\n"

    def write_message(self, message: dict[str, Any]) -> None:
        """The front's own answers, before the SDK runs."""
        self._write_all(encode(message) + b"\n")  # the SDK's bytes (UTF-8, not \\u escapes)

    async def send(self, data: bytes) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._write_all, data)

    async def send_now(self, data: bytes) -> None:
        """`data` written on the loop when the pipe takes it whole at once (the output is
        non-blocking: claim_stdio), else, in order, as `send` writes it."""
        if self._writing.acquire(blocking=False):
            try:
                written = os.write(self.out_fd, data)
            except BlockingIOError:
                written = 0
            except BaseException:
                self._writing.release()
                raise
            if written == len(data):
                self._writing.release()
                return
            # The rest in a thread that holds the lock until it is out (and then frees it).
            rest = data[written:]
            await asyncio.get_running_loop().run_in_executor(None, self._finish, rest)
            return
        await self.send(data)

    def _finish(self, rest: bytes) -> None:
        try:
            self._write_locked(rest)
        finally:
            self._writing.release()

    def _write_all(self, data: bytes) -> None:
        with self._writing:
            self._write_locked(data)

    def _write_locked(self, data: bytes) -> None:
        """All of `data`, waiting while the pipe is full."""
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.out_fd, view) :]
            except BlockingIOError:
                select.select([], [self.out_fd], [])


def _is_stream(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.asynccontextmanager
async def claim_stdio() -> Any:
    """Pipes over private duplicates of fd 0 and 1, or None when either is not a pipe or a
    socket (a file or a terminal: the SDK's own transport serves it, as before)."""
    if not (_is_stream(0) and _is_stream(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    with private_stdio() as (private_in, private_out):
        # Non-blocking, as asyncio makes stdin: an answer is written on the loop when the
        # pipe takes it at once (no thread hop), and never blocks the loop when it does not.
        # The description is this process's own (fd 1 now writes to stderr).
        os.set_blocking(private_out, False)
        stdin = os.fdopen(private_in, "rb", buffering=0, closefd=False)
        try:
            reader = asyncio.StreamReader(limit=LINE_LIMIT)
            transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), stdin
            )
            try:
                yield Pipes(reader, private_out)
            finally:
                transport.close()
        finally:
            os.set_blocking(private_out, True)
