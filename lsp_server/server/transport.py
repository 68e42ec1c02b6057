"""The wire: stdio (an asyncio pipe reader, no thread hop per line, with a size cap) and TCP
on loopback (server/tcp.py); logging to stderr and window/logMessage.

pygls reads stdin through a worker thread for every header line and body; on a busy
2-core machine those hops cost more than the tool call. The framing (server/framing.py)
answers or drops every malformed message and keeps reading.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from lsp_server.server import framing
from lsp_server.server.handlers import create_server
from lsp_server.server.server import ToolhostServer
from lsp_server.wire.private_stdio import private_stdio

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class LoopOwned:
    """A writer made on the event loop that only the loop's thread may touch: pygls sends
    from whichever thread calls it (a log record forwarded from a worker, a didCall or
    progress of a call run in a thread), so such a message is handed to the loop."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def handed_to_loop(self, data: bytes) -> bool:
        """True when called from another thread: `data` is handed to the loop, or dropped
        when the loop has closed (its stream or socket is closed by then too)."""
        if threading.get_ident() == self._thread:
            return False
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self.write, data)
        return True


class CoalescingWriter(LoopOwned):
    """Messages written in one event-loop turn (a result and its didCall) leave in one write:
    half the syscalls and client wake-ups of pygls' write-and-flush per message. Only the
    loop's thread touches the pending list and the stream (LoopOwned)."""

    def __init__(self, stream: BinaryIO) -> None:
        super().__init__()
        self._stream = stream
        self._pending: list[bytes] = []
        self._scheduled = False

    def write(self, data: bytes) -> None:
        if self.handed_to_loop(data):
            return
        self._pending.append(data)
        if self._scheduled:
            return
        try:
            asyncio.get_running_loop().call_soon(self.flush)
            self._scheduled = True
        except RuntimeError:  # no loop (shutting down): write now
            self.flush()

    def flush(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        data, self._pending = b"".join(self._pending), []
        try:
            self._stream.write(data)
            self._stream.flush()
        except (BrokenPipeError, ValueError):  # the client closed its end, or we closed ours
            log.debug("dropped %d bytes for a closed output", len(data))

    def close(self) -> None:
        self.flush()
        self._stream.close()


@contextlib.contextmanager
def private_files() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The client's stdin and stdout as files over private duplicates (private_stdio.py)."""
    with (
        private_stdio() as (private_in, private_out),
        os.fdopen(private_in, "rb", buffering=0, closefd=False) as stdin,
        os.fdopen(private_out, "wb", closefd=False) as stdout,
    ):
        yield stdin, stdout


def _pollable(file: BinaryIO) -> bool:
    """Whether the event loop can wait on `file` (a pipe, a socket, a terminal): epoll
    refuses regular files and the null device, and the loop would then never read."""
    poller = select.epoll()
    try:
        poller.register(file.fileno(), select.EPOLLIN)
    except OSError:
        return False
    finally:
        poller.close()
    return True


async def _read_in_thread(reader: asyncio.StreamReader, file: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    while chunk := await loop.run_in_executor(None, file.read, 1 << 16):
        reader.feed_data(chunk)
    reader.feed_eof()


async def serve_pipes(protocol: Any, cap: int, stdin: BinaryIO, stdout: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 16)
    feeding = None
    reading = None
    if _pollable(stdin):
        stream = asyncio.StreamReaderProtocol(reader)
        reading, _ = await loop.connect_read_pipe(lambda: stream, stdin)
    else:  # `toolhost serve < file` (or < /dev/null): read in a thread
        feeding = asyncio.create_task(_read_in_thread(reader, stdin))
    writer = CoalescingWriter(stdout)
    protocol.set_writer(writer)
    deliver, reply_error = message_handlers(protocol, writer)
    try:
        await framing.read_loop(framing.FrameReader(reader), cap, deliver, reply_error)
    finally:
        if reading is not None:
            # Before the caller closes stdin: `exit` ends the loop by SystemExit, and a pipe
            # still watched would then be read closed ("Fatal read error", an error line).
            reading.close()
        if feeding is not None:
            feeding.cancel()
        await end_requests_in_flight(protocol)
        writer.flush()


def message_handlers(
    protocol: Any, writer: LoopOwned
) -> tuple[Callable[[dict[str, Any]], None], framing.ErrorReply]:
    """What the wire's loop (framing.read_loop) does with a message read whole, and how it
    answers one it cannot read: the same over stdio and TCP."""

    def reply_error(msg_id: Any, code: int, message: str) -> None:
        log.warning("answered a malformed message (id %r) with %d: %s", msg_id, code, message)
        error = {"code": code, "message": message}
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error}).encode()
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def deliver(data: dict[str, Any]) -> None:
        try:
            protocol.handle_message(protocol.structure_message(data))
        except JsonRpcException:
            pass  # answered by ToolhostProtocol.structure_message
        except Exception as exc:  # a message pygls cannot handle must not end the loop
            log.warning("dropped a message pygls could not handle: %s", type(exc).__name__)
            if "id" in data and "method" in data:
                reply_error(data["id"], -32600, "the message could not be handled")

    return deliver, reply_error


async def end_requests_in_flight(protocol: Any, timeout: float = 10) -> None:
    """The client closed its end: each request still running is cancelled (a tool's shell
    group is killed) and answered once while the output is still open, with the tool's own
    "cancelled" result or pygls' RequestCancelled. Requests of ours that wait for the
    client's answer are cancelled too: it will not come."""
    running = [f for f in protocol._request_futures.values() if isinstance(f, asyncio.Future)]
    for future in running:
        future.cancel()
    if running:
        await asyncio.wait(running, timeout=timeout)


class LogForwarder(logging.Handler):
    """Forwards log records to the client's window/logMessage (stdout belongs to JSON-RPC)."""

    def __init__(self, server: ToolhostServer) -> None:
        super().__init__(logging.INFO)
        self._server = server

    def emit(self, record: logging.LogRecord) -> None:
        if self._server.runtime is None and not self._server.warm_up.started:
            return  # before the initialize answer (once it is out, the warm-up starts)
        kind = (
            types.MessageType.Error
            if record.levelno >= logging.ERROR
            else (
                types.MessageType.Warning
                if record.levelno >= logging.WARNING
                else types.MessageType.Info
                if record.levelno >= logging.INFO
                else types.MessageType.Log
            )
        )
        # The message only: a traceback stays in the server's own log (stderr).
        text = f"{record.levelname} {record.name}: {record.getMessage()}"
        if record.exc_info:
            text += " (traceback in the server's log)"
        try:
            self._server.window_log_message(types.LogMessageParams(type=kind, message=text))
        except Exception:  # never let logging break the server
            self.handleError(record)


def stop_children_on_sigterm(server: ToolhostServer) -> None:
    """An editor stopping the server with SIGTERM must not orphan its children: the kill
    hooks (synchronous, no waiting) run first, then the default action ends the process."""

    def handler(signum: int, frame: object) -> None:
        server.lifecycle.kill_now()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, handler)


def serve_stdio(root: Path | None = None) -> NoReturn:
    server = create_server(root)
    setup_logging(server)
    stop_children_on_sigterm(server)

    async def main() -> None:
        with private_files() as (stdin, stdout):
            try:
                await serve_pipes(server.protocol, MAX_MESSAGE_BYTES, stdin, stdout)
            finally:
                await server.close()

    with contextlib.suppress(KeyboardInterrupt, SystemExit, BrokenPipeError):
        asyncio.run(main())
    end_now()


def end_now() -> NoReturn:
    """End the process once the server is closed, without the interpreter's teardown.

    Freeing every object of a served runtime takes a second of CPU (more on a busy machine)
    and changes nothing outside the process, while the client waits for the process to end
    after `exit`: VS Code's client kills it after 2 s and logs that as an error. What a
    normal end does that matters still runs: other threads are joined, atexit hooks run,
    the standard streams are flushed."""
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def setup_logging(server: ToolhostServer) -> None:
    """Records of INFO and up reach the client as window/logMessage, each at its own level.
    stderr gets warnings and errors only (or what TOOLHOST_LOG asks for): clients read the
    server's stderr as errors (VS Code's client logs each line as [error], Neovim's lsp.log
    as ERROR), so a healthy start writes nothing there."""
    root_logger = logging.getLogger()
    asked = logging.getLevelNamesMapping().get(os.environ.get("TOOLHOST_LOG", "").upper())
    root_logger.setLevel(logging.INFO if asked is None else min(asked, logging.INFO))
    stderr = logging.StreamHandler()
    stderr.setLevel(logging.WARNING if asked is None else asked)
    stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root_logger.addHandler(stderr)
    forward = LogForwarder(server)
    logging.getLogger("lsp_server").addHandler(forward)
    logging.getLogger("pygls").setLevel(logging.WARNING)
