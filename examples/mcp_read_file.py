"""One tool call over MCP, as an agent chat makes it.

Starts `toolhost mcp` on stdio with the official MCP SDK's client, rooted at
examples/workspace, calls the read_file tool once (README.md) and prints its text.

    .venv/bin/python examples/mcp_read_file.py
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

WORKSPACE = Path(__file__).resolve().parent / "workspace"


async def main() -> None:
    # `toolhost mcp --root examples/workspace`, run by this interpreter. The environment is
    # passed whole: toolhost finds its state and config folders as this process does.
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lsp_server", "mcp", "--root", str(WORKSPACE)],
        env=dict(os.environ),
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("read_file", {"path": "README.md"})
    print(result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
