"""The official MCP SDK's own client (ClientSession over stdio_client) against `toolhost mcp`
started as a subprocess; helpers shared by the MCP tests."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation


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
