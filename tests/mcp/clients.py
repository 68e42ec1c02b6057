"""The official MCP SDK's own client (ClientSession over stdio_client) against `toolhost mcp`
started as a subprocess, a raw newline-delimited JSON-RPC client for what the SDK would not
send; helpers shared by the MCP tests."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage
from mcp_types import Implementation

from lsp_server.mcp.server import Backend, build_server

if TYPE_CHECKING:
    from lsp_server.core.contract import Surface


def toolhost_command() -> list[str]:
    toolhost = Path(sys.executable).parent / "toolhost"
    if toolhost.exists():
        return [str(toolhost)]
    return [sys.executable, "-m", "lsp_server.cli"]


@asynccontextmanager
async def mcp_session(
    root: Path,
    *args: str,
    modern: bool = False,
    name: str = "toolhost-tests",
    **session_options: Any,
) -> AsyncIterator[ClientSession]:
    """An initialized session (2025-11-25 by initialize, or 2026-07-28 by discover)."""
    command = toolhost_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "mcp", "--root", str(root), *args],
        env=dict(os.environ),
        cwd=str(root),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(
            read, write, client_info=Implementation(name=name, version="1.0"), **session_options
        ) as session,
    ):
        if modern:
            await session.discover()
        else:
            await session.initialize()
        yield session


def text_of(result: Any) -> str:
    return "".join(part.text for part in result.content if part.type == "text")


def structured(result: Any) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


class RawMcp:
    """Newline-delimited JSON-RPC to a `toolhost mcp` subprocess, as a careless client (or one
    that answers the server's requests by hand) writes it."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 100

    async def send_bytes(self, payload: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(payload + b"\n")
        await self.process.stdin.drain()

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_bytes(json.dumps(message).encode())

    async def next_message(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        # A generous bound for a busy machine, not a timing assertion.
        line = await asyncio.wait_for(self.process.stdout.readline(), 60)
        assert line, "the MCP server closed its output: it died"
        message: dict[str, Any] = json.loads(line)
        return message

    async def answer(self, message_id: Any) -> dict[str, Any]:
        """The response to `message_id` (the server's own requests are skipped)."""
        while True:
            message = await self.next_message()
            if message.get("id") == message_id and "method" not in message:
                return message

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await self.answer(self.next_id)

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()


async def spawn_mcp(root: Path, env: dict[str, str] | None = None) -> RawMcp:
    """`toolhost mcp --attach never` on `root`, not yet initialized."""
    process = await asyncio.create_subprocess_exec(
        *toolhost_command(),
        "mcp",
        "--root",
        str(root),
        "--attach",
        "never",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=64 * 1024 * 1024,
        env={**os.environ, **(env or {})},
    )
    return RawMcp(process)


def blocked_sdk(tmp_path: Path) -> dict[str, str]:
    """An environment whose `mcp` package (the SDK) takes ten minutes to import."""
    folder = tmp_path / "slow-sdk"
    (folder / "mcp").mkdir(parents=True)
    (folder / "mcp" / "__init__.py").write_text("import time\ntime.sleep(600)\n")
    return {"PYTHONPATH": str(folder)}


async def answered_without_sdk(
    root: Path, tmp_path: Path, messages: list[dict[str, Any]], count: int
) -> list[dict[str, Any]]:
    """The first `count` answers of `toolhost mcp` whose SDK cannot load, to `messages` sent
    at once."""
    client = await spawn_mcp(root, blocked_sdk(tmp_path))
    try:
        await client.send_bytes(b"\n".join(json.dumps(m).encode() for m in messages))
        return [await client.next_message() for _ in range(count)]
    finally:
        await client.close()


async def raw_mcp(
    root: Path, capabilities: dict[str, Any], name: str, env: dict[str, str] | None = None
) -> RawMcp:
    """`toolhost mcp --attach never` on `root`, initialized (revision 2025-11-25)."""
    client = await spawn_mcp(root, env)
    init = await client.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": name, "version": "0"},
        },
    )
    assert init["result"]["protocolVersion"] == "2025-11-25"
    await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return client


async def sdk_answers(
    root: Path, messages: list[dict[str, Any]], surface: Surface = "full"
) -> list[dict[str, Any]]:
    """The answers of the SDK's own server (as `toolhost mcp` builds it) to the requests among
    `messages`, sent in turn."""
    server = build_server(Backend(root, surface, "", "never"))
    to_server, server_reads = anyio.create_memory_object_stream[Any](4)
    server_writes, from_server = anyio.create_memory_object_stream[Any](4)
    replies: list[dict[str, Any]] = []
    async with anyio.create_task_group() as group:
        group.start_soon(
            lambda: server.run(server_reads, server_writes, server.create_initialization_options())
        )
        for message in messages:
            parsed = types.jsonrpc_message_adapter.validate_python(message, by_name=False)
            await to_server.send(SessionMessage(parsed))
            if "id" in message:
                reply: SessionMessage = await from_server.receive()
                replies.append(
                    json.loads(reply.message.model_dump_json(by_alias=True, exclude_unset=True))
                )
        group.cancel_scope.cancel()
    return replies


async def sdk_answer(root: Path, message: dict[str, Any]) -> dict[str, Any]:
    return (await sdk_answers(root, [message]))[0]
