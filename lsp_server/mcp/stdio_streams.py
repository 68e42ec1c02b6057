"""The SDK's read and write streams over the front's pipes (mcp/front.py).

The same messages as the SDK's `stdio_server` (each line validated by
`jsonrpc_message_adapter`, each answer dumped by alias without unset fields, one per
line), read on the event loop and written by one worker-thread hop per answer: the SDK's
transport hops to a worker thread for every line read, every write and every flush. The
lines the front read before the SDK was loaded come first; the SDK's answers to the
requests the front already answered are dropped. A plain tools/call is the front's
(mcp/fast.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage

from lsp_server.mcp.front import Pipes
from lsp_server.mcp.sdk_json import encode, escaped, lone_surrogate
from lsp_server.wire import broken_json

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def pipe_streams(pipes: Pipes) -> AsyncIterator[tuple[Any, Any]]:
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)

    async def deliver(line: bytes) -> None:
        text = line.decode("utf-8", "replace")
        if not text.strip():
            return
        try:
            message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except Exception as exc:
            try:
                answer = unreadable_request(text)
            except Exception:  # one odd line never ends the connection
                log.exception("no answer for a line the SDK cannot read: %.200s", text.strip())
                answer = None
            if answer is None:  # nobody to answer: the SDK drops it, as before, and we say so
                log.warning("dropped a line that is not a JSON-RPC message: %.200s", text.strip())
                await read_writer.send(exc)
            else:  # a request with an id would otherwise wait for ever (the SDK drops it)
                log.warning("refused a malformed request: %.200s", text.strip())
                await pipes.send(answer)
            return
        await read_writer.send(SessionMessage(message))

    async def read_lines() -> None:
        try:
            async with read_writer:
                pending, pipes.pending = pipes.pending, []
                for line in pending:
                    if not line:
                        return
                    await deliver(line)
                while line := await pipes.read_line():
                    if pipes.fast is None or not pipes.fast.take(line):
                        await deliver(line)
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async def write_lines() -> None:
        try:
            async with write_reader:
                async for session_message in write_reader:
                    message = session_message.message
                    if _answered(message, pipes.answered):
                        if isinstance(message, types.JSONRPCError):
                            log.warning("the SDK refused a request the front answered")
                        continue
                    await pipes.send(sdk_line(message))
        except (anyio.ClosedResourceError, ConnectionError):
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(read_lines)
        group.start_soon(write_lines)
        yield read_stream, write_stream


def sdk_line(message: Any) -> bytes:
    """An SDK message as its line: as the SDK dumps it, or escaped (mcp/sdk_json.py `escaped`)
    when it holds a lone surrogate, which pydantic refuses to write."""
    try:
        dumped: str = message.model_dump_json(by_alias=True, exclude_unset=True)
        return dumped.encode("utf-8") + b"\n"
    except ValueError:  # PydanticSerializationError, UnicodeEncodeError
        return escaped(message.model_dump(by_alias=True, exclude_unset=True)) + b"\n"


def unreadable_request(text: str) -> bytes | None:
    """The JSON-RPC error for a line the SDK cannot read that is a request with an id
    (a string or an integer) to answer; None for anything else (no id to be found). A line
    that is not JSON, or nested too deeply to parse, is answered at the id its text shows."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        unparsed_id = broken_json.request_id(text.encode("utf-8", "surrogateescape"))
        if unparsed_id is None:
            return None
        why = "nested too deeply" if isinstance(exc, RecursionError) else f"not JSON: {exc}"
        error = {"code": types.PARSE_ERROR, "message": f"Parse error: the request is {why}"}
        return encode({"jsonrpc": "2.0", "id": unparsed_id, "error": error}) + b"\n"
    if not isinstance(message, dict) or "method" not in message or "result" in message:
        return None
    message_id = message.get("id")
    if isinstance(message_id, bool) or not isinstance(message_id, int | str):
        if message_id is None:
            return None  # a notification (or id null): the SDK drops it, logged
        # An id JSON-RPC does not allow (a float, an object, a boolean): answered at id null.
        error = {"code": types.INVALID_REQUEST, "message": _ODD_ID}
        return encode({"jsonrpc": "2.0", "id": None, "error": error}) + b"\n"
    if message.get("jsonrpc") != "2.0" or not isinstance(message["method"], str):
        code = types.INVALID_REQUEST
        reason = 'Invalid request: a request has "jsonrpc": "2.0", an id and a string "method"'
    elif lone_surrogate(message):
        code = types.PARSE_ERROR
        reason = _SURROGATE
    else:
        code = types.INVALID_PARAMS
        reason = "Invalid request parameters: params must be an object, or left out"
    error = {"code": code, "message": reason}
    return encode({"jsonrpc": "2.0", "id": message_id, "error": error}) + b"\n"


_ODD_ID = "Invalid request: a request's id is a string or an integer"
_SURROGATE = (
    "Parse error: the request holds a lone surrogate escape (such as \\ud800), which is "
    "not Unicode text; send the text as UTF-8"
)


def _answered(message: Any, ids: list[Any]) -> bool:
    """A response to one of `ids`, which is then taken off the list."""
    if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
        return False
    for index, known in enumerate(ids):
        if message.id == known and type(message.id) is type(known):
            del ids[index]
            return True
    return False
