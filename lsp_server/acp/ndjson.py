"""ACP's transport: JSON-RPC 2.0, one JSON message per line, over a pair of byte streams.

A line that is not a JSON object, or one longer than LINE_LIMIT, is reported as `Malformed`
(the reader skips it and goes on): one bad message never ends a connection.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import attrs

from lsp_server.wire import broken_json

# Whole files travel inside messages (fs/write_text_file): allow big ones.
LINE_LIMIT = 64 * 1024 * 1024
_CHUNK = 256 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MAX_SAFE_ID = 2**53 - 1
"""The largest integer a JavaScript number holds exactly (ACP's SDKs are TypeScript)."""
# Server-defined: a refusal by toolhost (the message holds its code, cause and recovery).
REFUSED = -32000
# Server-defined: the agent behind the proxy is not there (any more).
AGENT_GONE = -32001


@attrs.frozen
class Malformed:
    """A line that is not a JSON-RPC message."""

    reason: str
    preview: str
    request_id: Any = None
    """The request's id, when it had a usable one (an overlong request's, when its head
    showed one), so that it can be answered."""


Message = dict[str, Any]


def encode(message: Message) -> bytes:
    """One line of UTF-8 JSON. A message holding a lone surrogate (an id or a method the peer
    wrote with one, a file name that is not UTF-8) goes out with every non-ASCII character
    as a `\\uXXXX` escape: valid UTF-8 all the same, and the peer reads back the very
    string it sent (its id finds its request; U+FFFD in its place would not)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        escaped = json.dumps(message, ensure_ascii=True, separators=(",", ":"), default=str)
        return escaped.encode("ascii") + b"\n"


def parse(line: bytes) -> Message | Malformed:
    preview = line[:120].decode("utf-8", "replace")
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as exc:
        # Its id, when the bytes show one: the error then reaches the request waiting on it.
        return Malformed(f"not JSON ({type(exc).__name__})", preview, broken_json.request_id(line))
    if not isinstance(value, dict):
        return Malformed("not a JSON-RPC object (a batch or a bare value)", preview)
    # A request's own id, when usable: its error goes to it rather than to id null.
    request_id = value.get("id") if "method" in value else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    if value.get("jsonrpc") != "2.0":
        return Malformed('no "jsonrpc": "2.0"', preview, request_id)
    method = value.get("method")
    if "method" in value and not isinstance(method, str):  # null too: not a response either
        return Malformed('"method" is not a string', preview, request_id)
    if method is None and "id" not in value:
        return Malformed("neither a request, a notification nor a response", preview)
    if isinstance(request_id, int) and abs(request_id) > MAX_SAFE_ID:
        # The agent's SDK reads it as a JavaScript number: its answer would carry another id.
        why = f"an integer id past {MAX_SAFE_ID}, which a JavaScript peer cannot give back"
        return Malformed(why + " exactly (use a smaller integer or a string)", preview, request_id)
    return value


class LineReader:
    """Lines of a stream, however long, without asyncio's 64 KiB readline limit."""

    def __init__(self, reader: asyncio.StreamReader, limit: int = LINE_LIMIT) -> None:
        self._reader = reader
        self._limit = limit
        self._buffer = bytearray()
        self._eof = False
        self._scanned = 0  # the buffer holds no newline before this offset
        self._head = b""  # the start of the last overlong line

    async def next(self) -> Message | Malformed | None:
        """The next message; None at the end of the stream."""
        while True:
            line, overlong = await self._line()
            if overlong:
                preview = self._head[:120].decode("utf-8", "replace")
                reason = f"a message over {self._limit} bytes"
                return Malformed(reason, preview, broken_json.request_id(self._head))
            if line is None:
                return None
            if line.strip():
                return parse(line)

    async def _line(self) -> tuple[bytes | None, bool]:
        """The next line (None at the end) and whether it was over the limit (then dropped)."""
        overlong = False
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scanned = 0
                if not overlong and len(line) > self._limit:
                    self._head, overlong = line[: broken_json.HEAD_BYTES], True
                return (None if overlong else line), overlong
            if len(self._buffer) > self._limit:
                if not overlong:
                    self._head = bytes(self._buffer[: broken_json.HEAD_BYTES])
                overlong = True  # read on to the end of this line, keep none of it
                self._buffer.clear()
            self._scanned = len(self._buffer)
            if self._eof:
                if not self._buffer and not overlong:
                    return None, False
                rest = bytes(self._buffer)
                self._buffer.clear()
                self._scanned = 0
                return (None if overlong else rest), overlong
            try:
                chunk = await self._reader.read(_CHUNK)
            except (ConnectionError, OSError):
                chunk = b""
            if not chunk:
                self._eof = True
            self._buffer += chunk


def error_reply(request_id: Any, code: int, message: str, data: Any = None) -> Message:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def result_reply(request_id: Any, result: Any) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}
