"""`toolhost serve --tcp`: one authenticated editor connection on loopback, nothing else.

pygls' own TCP server hands every connection the same protocol object (a second local
connection was served without a token and received the first one's replies) and stops the
server when any connection ends. Here each connection must open with an `initialize`
carrying the token (`initializationOptions.toolhost.token`), read by this gate before
the protocol sees a byte. By design the server serves exactly one editor connection: a
connection without the right token, or any connection while the editor is attached, gets
one JSON-RPC error and is closed; one that sends nothing, or half a message, is dropped.
Neither touches the server. When the editor's own connection ends, the server ends with
it (as over stdio: jobs and child language servers stop).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
import sys
from pathlib import Path
from typing import Any

from lsp_server.home.dirs import Dirs
from lsp_server.home.token_files import write_token_file
from lsp_server.server import framing
from lsp_server.server.handlers import create_server
from lsp_server.server.server import ToolhostServer
from lsp_server.server.transport import (
    MAX_MESSAGE_BYTES,
    LoopOwned,
    end_requests_in_flight,
    message_handlers,
    setup_logging,
    stop_children_on_sigterm,
)

log = logging.getLogger(__name__)

# The first message of a connection: small, and soon.
FIRST_MESSAGE_BYTES = 1 << 20
FIRST_MESSAGE_SECONDS = 10.0
_LENGTH = re.compile(rb"content-length:\s*(\d+)", re.IGNORECASE)
REFUSED = -32600


async def _first_message(reader: asyncio.StreamReader) -> bytes | None:
    """The body of the connection's first message, or None (closed, malformed, too big)."""
    length = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        match = _LENGTH.match(line)
        if match:
            length = int(match.group(1))
    if length is None or length > FIRST_MESSAGE_BYTES:
        return None
    return await reader.readexactly(length)


def _token_of(message: Any) -> str | None:
    """The token an `initialize` request carries, if it is one."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    toolhost = options.get("toolhost") if isinstance(options, dict) else None
    token = toolhost.get("token") if isinstance(toolhost, dict) else None
    return token if isinstance(token, str) else None


class _SocketWriter(LoopOwned):
    """What pygls writes responses to: the editor's socket (asyncio's transports are not
    thread-safe: LoopOwned)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        super().__init__()
        self._writer = writer

    def write(self, data: bytes) -> None:
        if self.handed_to_loop(data):
            return
        if not self._writer.is_closing():
            self._writer.write(data)

    def close(self) -> None:
        self._writer.close()


class TcpGate:
    def __init__(self, server: ToolhostServer, token: str) -> None:
        self._server = server
        self._token = token
        self._attached = False
        self._editor_done = asyncio.Event()

    async def serve(self, host: str, port: int) -> None:
        listener = await asyncio.start_server(self._connection, host, port)
        async with listener:
            await self._editor_done.wait()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            body = await asyncio.wait_for(_first_message(reader), FIRST_MESSAGE_SECONDS)
            message = json.loads(body) if body is not None else None
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError):
            body = message = None
        if body is None or message is None:
            writer.close()  # nothing (or nothing readable) was sent: nothing to answer
            return
        token = _token_of(message)
        if token is None or not secrets.compare_digest(token.encode(), self._token.encode()):
            await self._refuse(writer, message, "toolhost: refused: wrong or missing token")
            return
        if self._attached:
            await self._refuse(
                writer,
                message,
                "toolhost: refused: already serving an editor connection (one per server)",
            )
            return
        self._attached = True
        try:
            await self._serve_editor(reader, writer, body)
        finally:
            writer.close()
            self._editor_done.set()

    async def _refuse(self, writer: asyncio.StreamWriter, message: Any, text: str) -> None:
        log.warning("%s (connection from %s)", text, writer.get_extra_info("peername"))
        msg_id = message.get("id") if isinstance(message, dict) else None
        error = {"code": REFUSED, "message": text}
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error}).encode()
        with contextlib.suppress(ConnectionError):
            writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            await writer.drain()
        writer.close()

    async def _serve_editor(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bytes
    ) -> None:
        protocol = self._server.protocol
        socket_writer = _SocketWriter(writer)
        protocol.set_writer(socket_writer)
        deliver, reply_error = message_handlers(protocol, socket_writer)
        deliver(json.loads(first))  # an initialize with the token (_connection read it)
        with contextlib.suppress(ConnectionError):
            await framing.read_loop(
                framing.FrameReader(reader), MAX_MESSAGE_BYTES, deliver, reply_error
            )
        await end_requests_in_flight(protocol)


def serve_tcp(port: int, root: Path | None = None) -> None:
    dirs = Dirs.from_environment()
    token_file = dirs.state / f"tcp-{port}.token"
    token = write_token_file(token_file)
    server = create_server(root, tcp_token=token, dirs=dirs)
    setup_logging(server)
    stop_children_on_sigterm(server)
    print(
        f"toolhost: listening on 127.0.0.1:{port}; token in {token_file}",
        flush=True,
        file=sys.stderr,
    )

    async def main() -> None:
        try:
            await TcpGate(server, token).serve("127.0.0.1", port)
        finally:
            await server.close()

    with contextlib.suppress(KeyboardInterrupt, SystemExit):
        asyncio.run(main())
