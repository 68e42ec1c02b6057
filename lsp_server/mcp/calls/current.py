"""What the tools/call handler tells the approver about the call it runs (light: no SDK)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

# (message, requested schema) -> (action, content): the MCP client's answer to the form.
Elicit = Callable[[str, dict[str, Any]], Awaitable[tuple[str, dict[str, Any] | None]]]

# Set by the tools/call handler for the call it runs, when its client can be asked.
CURRENT_ELICIT: ContextVar[Elicit | None] = ContextVar("toolhost_mcp_elicit", default=None)

# The MCP client's name (its clientInfo) for the call the tools/call handler runs.
CURRENT_CLIENT: ContextVar[str] = ContextVar("toolhost_mcp_client", default="the MCP client")
