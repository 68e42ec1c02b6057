"""Who toolhost's MCP server says it is: its name, version, instructions and capabilities,
as the SDK's server (mcp/server.py) and the front's own answers (mcp/stdio/handshake.py) give them.
Standard library only: the front loads it before the SDK."""

from __future__ import annotations

from typing import Any

from lsp_server import __version__

SERVER_NAME = "toolhost"
INSTRUCTIONS = (
    "toolhost: file, search, shell and code tools with stale-write protection. Read a file "
    "before editing it; a truncated result names the use_capability call that pages it."
)
CAPABILITIES: dict[str, Any] = {"tools": {"listChanged": False}}


def server_info() -> dict[str, str]:
    return {"name": SERVER_NAME, "version": __version__}
