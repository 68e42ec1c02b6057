"""The SDK's server on stdio (what the front's loader imports: mcp/stdio/loader.py): over the
front's pipes (mcp/stdio/stdio_pipes.py), or, for stdin or stdout that is not a pipe, the SDK's own
transport.

Over the pipes, the same messages as the SDK's `stdio_server` (each line validated by
`jsonrpc_message_adapter`, each answer dumped by alias without unset fields, one per
line), read on the event loop and written by one worker-thread hop per answer: the SDK's
transport hops to a worker thread for every line read, every write and every flush. The
lines the front read before the SDK was loaded come first; the SDK's answers to the
requests the front already answered are dropped. A plain tools/call is the front's
(mcp/stdio/fast.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp_types.methods import serialize_server_result

from lsp_server.mcp.calls.unreadable import AnswerStream
from lsp_server.mcp.sdk_json import escaped
from lsp_server.mcp.server import Backend, build_server
from lsp_server.mcp.unreadable_requests import unreadable_request

if TYPE_CHECKING:
    from lsp_server.mcp.calls.tool_calls import Calls
    from lsp_server.mcp.stdio.stdio_pipes import Pipes

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


def _answered(message: Any, ids: list[Any]) -> bool:
    """A response to one of `ids`, which is then taken off the list."""
    if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
        return False
    for index, known in enumerate(ids):
        if message.id == known and type(message.id) is type(known):
            del ids[index]
            return True
    return False


async def serve(calls: Calls) -> None:
    """Serve stdin and stdout that are not pipes (a file, a terminal) with the SDK's transport."""
    backend = Backend(calls.root, calls.surface, calls.session, calls.attach, calls=calls)
    server = build_server(backend)
    warming = asyncio.create_task(backend.warm())
    try:
        async with stdio_server() as (read_stream, write_stream):
            answers = AnswerStream(read_stream)
            await server.run(answers, write_stream, server.create_initialization_options())
    finally:
        # The stream closed: running calls were cancelled (shell groups killed); stop the rest.
        warming.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(backend.close(), 10)


async def serve_pipes(pipes: Pipes, calls: Calls) -> None:
    """Serve the front's pipes; the front warms the calls and closes them (mcp/stdio/front.py), the
    tool listing is readied here in the background."""
    backend = Backend(calls.root, calls.surface, calls.session, calls.attach, calls=calls)
    fast = pipes.fast
    server = build_server(backend, fast.elicitation_ready if fast is not None else None)
    warming = asyncio.create_task(backend.warm(calls_too=False))
    try:
        async with pipe_streams(pipes) as (read_stream, write_stream):
            answers = AnswerStream(read_stream)
            await server.run(answers, write_stream, server.create_initialization_options())
    finally:
        warming.cancel()


async def serialize_call_result(version: str, result: dict[str, Any]) -> dict[str, Any]:
    """The SDK's wire form of a tools/call result on a handshake revision (mcp/stdio/fast.py)."""
    return serialize_server_result("tools/call", version, result)
