"""The stdio message loop: LSP framing read straight from the pipe, with every malformed
message answered or dropped and the loop kept alive.

pygls' own loop (`pygls.io_.run_async`) dies on a header line over the stream's limit,
waits forever on an absurd Content-Length, drops deep JSON and envelopes without
`"jsonrpc"` in silence, and ends with a traceback when EOF cuts a body. Here:
- a header line over 64 KiB is skipped (logged); the message it belonged to is read on;
- a body over the cap is drained and answered with -32600; a Content-Length no client
  could send (over 4x the cap) is not waited for: the reader looks for the next header;
- a body that is not JSON, or nested too deep to parse, is answered with -32700, and a
  request without `"jsonrpc": "2.0"` with -32600 (by the id found in the bytes, if any);
  a message with no id to answer is dropped with a log line;
- EOF anywhere ends the loop quietly.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from typing import Any

from lsp_server.wire.broken_json import HEAD_BYTES, ID_MEMBER, request_id

log = logging.getLogger(__name__)

MAX_HEADER_LINE = 64 * 1024
_CONTENT_LENGTH = re.compile(rb"^content-length:\s*(\d+)\s*$", re.IGNORECASE)
_NEXT_HEADER = b"Content-Length:"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

ErrorReply = Callable[[Any, int, str], None]
"""(id, code, message): send a JSON-RPC error response."""


class FrameReader:
    """A buffer in front of the pipe: lines with a length cap, bodies of a given size."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream
        self._buffer = bytearray()
        self._eof = False

    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await self._stream.read(1 << 16)
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    async def line(self) -> bytes | None:
        """The next line without its end; None at EOF. A line over MAX_HEADER_LINE is
        skipped to its end and returned as b"\\0" (no header can contain a NUL)."""
        skipped = False
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                too_long = skipped or len(line) > MAX_HEADER_LINE
                return b"\0" if too_long else line.rstrip(b"\r")
            if len(self._buffer) > MAX_HEADER_LINE:
                skipped = True
                self._buffer.clear()
            if not await self._fill():
                return None

    async def body(self, size: int) -> bytes | None:
        while len(self._buffer) < size:
            if not await self._fill():
                return None
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    async def drain(self, size: int, on_head: Callable[[bytes], None]) -> bool:
        """Discard `size` bytes without holding them; `on_head` sees the first bytes as
        soon as an id shows in them (or the body ends). False at EOF."""
        head = b""
        reported = False
        while size > 0:
            if not self._buffer and not await self._fill():
                break
            taken = bytes(self._buffer[:size])
            del self._buffer[: len(taken)]
            size -= len(taken)
            if not reported and len(head) < HEAD_BYTES:
                head += taken[: HEAD_BYTES - len(head)]
                if ID_MEMBER.search(head):
                    on_head(head)
                    reported = True
        if not reported:
            on_head(head)
        return size == 0

    async def skip_to_next_header(self, on_head: Callable[[bytes], None]) -> bool:
        """For a Content-Length that cannot be true: drop bytes up to the next
        `Content-Length:`; `on_head` sees what was dropped (as soon as an id shows)."""
        head = b""
        reported = False
        while True:
            found = self._buffer.find(_NEXT_HEADER)
            cut = found if found >= 0 else max(0, len(self._buffer) - len(_NEXT_HEADER))
            if not reported and len(head) < HEAD_BYTES:
                head += bytes(self._buffer[:cut])[: HEAD_BYTES - len(head)]
                if ID_MEMBER.search(head):
                    on_head(head)
                    reported = True
            del self._buffer[:cut]
            if found >= 0:
                break
            if not await self._fill():
                return False
        if not reported:
            on_head(head)
        return True


async def read_loop(
    reader: FrameReader,
    cap: int,
    deliver: Callable[[dict[str, Any]], None],
    reply_error: ErrorReply,
) -> None:
    """Read messages until EOF; `deliver` gets each well-formed JSON-RPC object."""
    while True:
        length: int | None = None
        while True:
            line = await reader.line()
            if line is None:
                return
            if line == b"\0":
                log.warning("dropped a header line over %d bytes", MAX_HEADER_LINE)
                continue
            if not line.strip():
                if length is not None:
                    break
                continue  # stray blank line between messages
            match = _CONTENT_LENGTH.match(line)
            if match:
                length = int(match.group(1))
        if length > 4 * cap:
            refuse = _oversize_reply(length, cap, reply_error)
            if not await reader.skip_to_next_header(refuse):
                return
            continue
        if length > cap:
            if not await reader.drain(length, _oversize_reply(length, cap, reply_error)):
                return
            continue
        body = await reader.body(length)
        if body is None:
            log.info("the input ended inside a message; stopping")
            return
        message = _parse(body, reply_error)
        if message is not None:
            deliver(message)


def _oversize_reply(length: int, cap: int, reply_error: ErrorReply) -> Callable[[bytes], None]:
    def refuse(head: bytes) -> None:
        msg_id = request_id(head)
        log.warning("dropped a message of %d bytes (limit %d)", length, cap)
        if msg_id is not None:
            reply_error(msg_id, INVALID_REQUEST, f"message of {length} bytes exceeds {cap} bytes")

    return refuse


def _parse(body: bytes, reply_error: ErrorReply) -> dict[str, Any] | None:
    try:
        data = json.loads(body)
    except RecursionError:
        _refuse(body, PARSE_ERROR, "the JSON is nested too deeply to parse", reply_error)
        return None
    except ValueError as exc:
        _refuse(body, PARSE_ERROR, f"the body is not valid JSON ({exc})", reply_error)
        return None
    if not isinstance(data, dict):
        _refuse(body, INVALID_REQUEST, "a message must be a JSON object", reply_error)
        return None
    if data.get("jsonrpc") != "2.0":
        if "method" in data and "id" in data:
            reply_error(data["id"], INVALID_REQUEST, 'a request must carry "jsonrpc": "2.0"')
        else:
            log.warning('dropped a message without "jsonrpc": "2.0"')
        return None
    return data


def _refuse(body: bytes, code: int, why: str, reply_error: ErrorReply) -> None:
    msg_id = request_id(body)
    if msg_id is None:
        log.warning("dropped a message: %s", why)
        return
    reply_error(msg_id, code, why)
