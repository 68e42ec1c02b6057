"""A bare symbol name -> its one definition, through the code index (for the lsp_* tools)."""

from __future__ import annotations

from pathlib import Path

import anyio

from lsp_server.core.errors import INVALID_ARGUMENT, ToolError
from lsp_server.runtime.context import ToolContext
from lsp_server.tools.code.code_index import _search_index, index_service

MAX_LISTED = 10


async def locate_definition(ctx: ToolContext, name: str) -> tuple[Path, int]:
    """(path, 1-based line of the name) when exactly one definition is called `name`."""
    root = ctx.workspace.primary_root
    service = index_service(ctx)
    rows, _, _ = await anyio.to_thread.run_sync(_search_index, service, root, name, None, 200, "")
    exact = [(rel, symbol) for rel, symbol in rows if name in (symbol.name, symbol.qualified_name)]
    if not exact:
        raise ToolError(
            INVALID_ARGUMENT,
            f"no definition named {name!r} in the workspace index",
            "pass `path` and `line` of an occurrence of the symbol (grep can find one)",
        )
    if len(exact) > 1:
        listed = "; ".join(
            f"{rel}:{symbol.start_line}: {symbol.kind} {symbol.qualified_name}"
            for rel, symbol in exact[:MAX_LISTED]
        )
        more = f" and {len(exact) - MAX_LISTED} more" if len(exact) > MAX_LISTED else ""
        raise ToolError(
            INVALID_ARGUMENT,
            f"{len(exact)} definitions are named {name!r}: {listed}{more}",
            "pass `path` and `line` of the one you mean",
            details={"candidates": [f"{rel}:{symbol.start_line}" for rel, symbol in exact]},
        )
    rel, symbol = exact[0]
    path = ctx.workspace.resolve(str(root / rel), "read")
    text = (await ctx.files.read_text(path)).text.splitlines()
    for number in range(symbol.start_line, min(symbol.end_line, len(text)) + 1):
        if name.rsplit(".", 1)[-1] in text[number - 1]:
            return path, number
    return path, symbol.start_line
