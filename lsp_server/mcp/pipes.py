"""The SDK's read and write streams over the front's pipes (mcp/front.py).

The same messages as the SDK's `stdio_server` (each line validated by
`jsonrpc_message_adapter`, each answer dumped by alias without unset fields, one per
line), read and written on the event loop: the SDK's transport hops to a worker thread for
every line read, every write and every flush. The lines the front read before the SDK was
loaded come first; the SDK's answer to the `initialize` the front already answered is
dropped (once).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage

from lsp_server.mcp.front import Pipes

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def pipe_streams(pipes: Pipes) -> AsyncIterator[tuple[Any, Any]]:
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    dropping = pipes.answered is not None

    async def deliver(line: bytes) -> None:
        text = line.decode("utf-8", "replace")
        if not text.strip():
            return
        try:
            message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except Exception as exc:
            await read_writer.send(exc)
            return
        await read_writer.send(SessionMessage(message))

    async def read_lines() -> None:
        try:
            async with read_writer:
                for line in pipes.pending:
                    await deliver(line)
                pipes.pending = []
                while line := await pipes.read_line():
                    await deliver(line)
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async def write_lines() -> None:
        nonlocal dropping
        try:
            async with write_reader:
                async for session_message in write_reader:
                    message = session_message.message
                    if dropping and _answers(message, pipes.answered):
                        dropping = False
                        if isinstance(message, types.JSONRPCError):
                            log.warning("the SDK refused the initialize the front accepted")
                        continue
                    dumped = message.model_dump_json(by_alias=True, exclude_unset=True)
                    pipes.write(dumped.encode("utf-8") + b"\n")
                    await pipes.drain()
        except (anyio.ClosedResourceError, ConnectionError):
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(read_lines)
        group.start_soon(write_lines)
        yield read_stream, write_stream


def _answers(message: Any, request_id: Any) -> bool:
    return (
        isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
        and message.id == request_id
        and type(message.id) is type(request_id)
    )
