"""`toolhost mcp` before the MCP SDK is loaded: the standard library only.

Importing the SDK (pydantic models of two protocol revisions, starlette) takes longer than
the official filesystem server needs to answer `initialize`. So the front claims stdin and
stdout, builds the runtime in a thread, and answers the opening request itself (a
well-formed `initialize` of the handshake revisions, or the `server/discover` of 2026-07-28
that Claude Code opens with) with the answer the SDK gives (mcp/openings.py;
tests/mcp/test_front.py compares them), then plain tools/list requests from the listing of
the last start, or made from the tool registry (mcp/listing_cache.py), while the SDK loads.
Everything it read is then handed to the SDK in order, the requests it answered included, so
that the SDK's session knows the client; the SDK's own answers to them are not sent again
(mcp/stdio_streams.py). Anything else (an odd opening, stdin or stdout that is not a pipe)
waits for the SDK and gets its answer, as before.

A plain `tools/call`, of either era, is not the SDK's at all: the front runs it on the warm
runtime and writes the SDK's answer itself (mcp/fast.py), so neither the SDK's import nor
its per-message work is on a call's path. The runtime is built from the start, in
a thread; the SDK is imported after it, or at once when a message needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import select
import stat
import sys
import threading
from pathlib import Path
from typing import Any

from lsp_server.mcp.calls.tool_calls import Calls
from lsp_server.mcp.fast import FastPath
from lsp_server.mcp.listing_cache import Listing, ListingCache
from lsp_server.mcp.loader import Loader
from lsp_server.mcp.openings import Opening, is_initialized, opening
from lsp_server.mcp.sdk_json import encode
from lsp_server.wire.private_stdio import private_stdio

log = logging.getLogger(__name__)

# The SDK's own transport reads a line of any length; so does the front (a cap would turn a
# big write_file into a parse error that it was not before).
LINE_LIMIT = sys.maxsize


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` holding .git or .toolhost.toml, else `start`."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists() or (folder / ".toolhost.toml").exists():
            return folder
    return start


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


async def serve(
    loader: Loader,
    root: Path,
    surface: str,
    session: str,
    attach: str,
    approvals: str | None = None,
) -> None:
    calls = Calls(root, surface, session, attach, approvals)  # type: ignore[arg-type]
    async with claim_stdio() as pipes:
        if pipes is None:
            server = await loader.module()
            await server.serve(calls)
            return
        first = await pipes.read_line()
        pipes.pending.append(first)
        message = _parsed(first)
        opened = opening(message)
        if opened is not None:
            pipes.write_message(opened.answer)
            pipes.answered.append(opened.answer["id"])
            pipes.fast = FastPath(
                calls,
                opened.version,
                opened.client_params(message),
                pipes.send_now,
                loader.start,
                loader.serializer,
                modern_meta=opened.meta,
            )
        warming = asyncio.ensure_future(_warm(calls, loader))
        try:
            if opened is not None:
                listing = Listing(ListingCache.of(opened.version, surface), calls)
                await _answer_while_loading(pipes, loader, opened, listing)
            server = await loader.module()
            await server.serve_pipes(pipes, calls)
        finally:
            warming.cancel()
            if pipes.fast is not None:
                await pipes.fast.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(calls.close(), 10)


# While the imports run in threads, the loop still answers (the listing, plain calls): each
# time it wakes it waits for the importing thread to give up the GIL, after 5 ms by default.
WARMING_SWITCH_INTERVAL = 0.0005


async def _warm(calls: Calls, loader: Loader) -> None:
    """Both imports in turn (they would share one GIL): the runtime first (tools/list and the
    first call need it), then the SDK; meanwhile the loop takes the GIL back sooner."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, WARMING_SWITCH_INTERVAL))
    try:
        await calls.warm()
        loader.start()
        await loader.loaded()
    finally:
        sys.setswitchinterval(interval)


async def _answer_while_loading(
    pipes: Pipes, loader: Loader, opened: Opening, listing: Listing
) -> None:
    """Until the SDK is loaded: plain tools/calls run (mcp/fast.py), `notifications/initialized`
    waits for the SDK, a plain tools/list is answered (mcp/listing_cache.py); anything else
    (or the end of input) waits with the rest."""
    loading = loader.loaded()
    while not loading.done() and pipes.pending[-1]:
        reading: asyncio.Future[Any] = pipes.next_line()
        await asyncio.wait({reading, loading}, return_when=asyncio.FIRST_COMPLETED)
        if not reading.done():
            break
        line = await pipes.read_line()
        if pipes.fast is not None and line and pipes.fast.take(line):
            continue
        pipes.pending.append(line)
        message = _parsed(line)
        if is_initialized(message):
            continue
        if not opened.takes_listing(message):
            break
        try:
            result = await listing.result()
        except Exception:  # the SDK's handler builds the same registry and reports it
            log.warning("the tool listing could not be made", exc_info=True)
            break
        pipes.write_message(opened.listing_answer(message["id"], result))
        pipes.answered.append(message["id"])


def _parsed(line: bytes) -> Any:
    try:
        return json.loads(line) if line else None
    except (ValueError, RecursionError):
        return None


def main(
    root: Path | None,
    surface: str,
    session: str,
    attach: str,
    http: str | None = None,
    approvals: str | None = None,
) -> int:
    loader = Loader() if http is None else None  # started by serve, after the runtime
    logging.basicConfig(
        level=os.environ.get("TOOLHOST_LOG", "WARNING").upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    resolved = (root or find_root(Path.cwd())).resolve()
    if not resolved.is_dir():
        print(f"toolhost mcp: --root {resolved} is not a folder", file=sys.stderr)
        return 2
    if loader is None:  # --http: no stdio to answer early
        from lsp_server.mcp import http_serve

        return http_serve.main(resolved, surface, session, attach, http, approvals)  # type: ignore[arg-type]
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        asyncio.run(serve(loader, resolved, surface, session, attach, approvals))
    return 0
