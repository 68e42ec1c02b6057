"""web_fetch: GET a public http(s) page and return it as readable text."""

from __future__ import annotations

from typing import Any

import anyio

from lsp_server.core.contract import JSON_SCHEMA_DIALECT, ContractEntry, Hints, Tool
from lsp_server.core.errors import WEB_HTTP_STATUS, ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext

_ERROR_EXCERPT_CHARS = 2000

CONTRACT = ContractEntry(
    name="web_fetch",
    hints=Hints(open_world=True),
    read_only=True,
    kind="read",
    description=(
        "Fetch a public http(s) URL with GET and return its content as text: HTML is turned "
        "into readable Markdown-like text (headings, lists, links, tables), other text is "
        "returned as is. Redirects are followed (at most 5). The body is capped (1 MiB by "
        "default; max_bytes lowers it) and the request times out after 15 s. Private, "
        "loopback, link-local and cloud-metadata addresses are refused."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["url"],
        "properties": {
            "url": {
                "type": "string",
                "minLength": 1,
                "maxLength": 8192,
                "description": "The absolute http:// or https:// URL to fetch.",
            },
            "max_bytes": {
                "type": "integer",
                "minimum": 1,
                "description": "Read at most this many body bytes (config caps it; 1 MiB default).",
            },
        },
    },
)


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    # Imported on first use: httpx, bs4 and markdownify cost most of a second of server
    # start-up, which every editor session would pay for a tool it may never call.
    from lsp_server.web.fetch import fetch
    from lsp_server.web.guard import AddressGuard
    from lsp_server.web.text import render_page

    web = ctx.config.web
    max_bytes = min(int(args.get("max_bytes", web.max_bytes)), web.max_bytes)
    page = await fetch(
        args["url"],
        guard=AddressGuard(allow_loopback=web.allow_loopback),
        time_limit=web.timeout_seconds,
        max_bytes=max_bytes,
    )
    # markdownify on a large page is CPU work: keep it off the event loop.
    text = await anyio.to_thread.run_sync(render_page, page)
    if page.status >= 400:
        raise ToolError(
            WEB_HTTP_STATUS,
            f"{page.url} answered HTTP {page.status} {page.reason}".rstrip(),
            "check the URL; the start of the error page follows",
            partial_text=text[:_ERROR_EXCERPT_CHARS],
        )
    return ToolOutput(text)


TOOLS = (Tool(CONTRACT, run),)
