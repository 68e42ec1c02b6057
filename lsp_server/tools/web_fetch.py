"""web_fetch: GET a public http(s) page and return it as readable text."""

from __future__ import annotations

from typing import Any

import anyio

from lsp_server.runtime.context import ToolContext
from lsp_server.runtime.contract import JSON_SCHEMA_DIALECT, ContractEntry, Tool
from lsp_server.runtime.errors import WEB_HTTP_STATUS, ToolError
from lsp_server.runtime.results import ToolOutput
from lsp_server.web.fetch import FetchedPage, fetch
from lsp_server.web.guard import AddressGuard
from lsp_server.web.text import classify, decode, html_to_text, media_type

_ERROR_EXCERPT_CHARS = 2000

CONTRACT = ContractEntry(
    name="web_fetch",
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


def _render(page: FetchedPage) -> str:
    kind = classify(page.content_type, page.body)
    header = [f"GET {page.url} -> {page.status} {page.reason}".rstrip()]
    if page.redirects:
        header.append("redirected from: " + " -> ".join(page.redirects))
    shown_type = media_type(page.content_type) or "unknown type"
    size = len(page.body)
    size_note = f"first {size} bytes, truncated" if page.truncated else f"{size} bytes"
    header.append(f"content: {shown_type}, {size_note}")
    if kind == "binary":
        body = f"[binary content ({shown_type}) not shown: web_fetch returns text only]"
    else:
        text = decode(page.body, page.charset, html=kind == "html")
        body = html_to_text(text, page.url) if kind == "html" else text
        if not body.strip():
            body = "(the page has no readable text)"
    if page.truncated:
        body += f"\n[body truncated at {len(page.body)} bytes: the page is larger]"
    return "\n".join(header) + "\n\n" + body


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    web = ctx.config.web
    max_bytes = min(int(args.get("max_bytes", web.max_bytes)), web.max_bytes)
    page = await fetch(
        args["url"],
        guard=AddressGuard(allow_loopback=web.allow_loopback),
        time_limit=web.timeout_seconds,
        max_bytes=max_bytes,
    )
    # markdownify on a large page is CPU work: keep it off the event loop.
    text = await anyio.to_thread.run_sync(_render, page)
    if page.status >= 400:
        raise ToolError(
            WEB_HTTP_STATUS,
            f"{page.url} answered HTTP {page.status} {page.reason}".rstrip(),
            "check the URL; the start of the error page follows",
            partial_text=text[:_ERROR_EXCERPT_CHARS],
        )
    return ToolOutput(text)


TOOLS = (Tool(CONTRACT, run),)
