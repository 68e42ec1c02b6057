"""ls: a folder's entries, sorted; folders marked with "/", files with their size."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.schema_parts import boolean, integer, object_schema, string
from lsp_server.tools.search.grep import excluded_patterns, ignore_base_for

if TYPE_CHECKING:
    pass

MAX_ENTRIES = 5000
# A recursive listing without a depth stops here (deeper folders are still marked "/").
DEFAULT_RECURSIVE_DEPTH = 20

CONTRACT = ContractEntry(
    name="ls",
    read_only=True,
    kind="read",
    description=(
        "List a folder: `name/` for folders, `name<TAB>bytes` for files, `name -> target` "
        "for links, in name order (recursive: paths relative to the folder, each folder "
        "followed by its contents). Skips .git and dependency folders, what .gitignore "
        f"ignores, and secret files. At most {MAX_ENTRIES} entries."
    ),
    schema=object_schema(
        {
            "path": string("Folder to list (default: the workspace root)."),
            "recursive": boolean("List subfolders too (default false)."),
            "depth": integer(
                "How many levels to list (1: only the folder's own entries); implies recursive.",
                minimum=1,
                maximum=100,
            ),
        },
        [],
    ),
    path_args=(PathArg("path", access="read", default="."),),
)


def _listing(ctx: ToolContext, folder: Path, depth: int) -> tuple[list[str], int]:
    from lsp_server.search.listing import list_entries
    from lsp_server.search.render import printable_path, unsearched_note

    if not folder.is_dir():
        return [f"{printable_path(ctx.workspace.relative(folder))}\t{folder.stat().st_size}"], 0
    rows: list[str] = []
    left_out = 0
    unreadable: list[tuple[str, str]] = []
    entries = list_entries(
        folder,
        depth=depth,
        ignore_base=ignore_base_for(ctx, folder),
        excluded=excluded_patterns(ctx),
        unreadable=unreadable,
    )
    for entry in entries:
        if ctx.workspace.is_secret(folder / entry.relative):
            continue
        if len(rows) < MAX_ENTRIES:
            rows.append(entry.row())
        else:
            left_out += 1
    prefix = ctx.workspace.relative(folder / "x")[:-1]
    skipped = [
        (path.removeprefix(str(folder).rstrip("/") + "/"), why)
        for path, why in unreadable
        if not ctx.workspace.is_secret(Path(path))
    ]
    note = unsearched_note(skipped, prefix.__add__, "listed")
    return rows + ([note] if note else []), left_out


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    folder = ctx.paths["path"]
    ctx.workspace.require_not_secret(folder)
    depth = args.get("depth") or (DEFAULT_RECURSIVE_DEPTH if args.get("recursive") else 1)
    rows, left_out = await anyio.to_thread.run_sync(
        partial(_listing, ctx, folder, depth), abandon_on_cancel=True
    )
    if left_out:
        rows.append(f"[... {left_out} more entries not shown; list a subfolder or lower depth]")
    return ToolOutput("\n".join(rows) or "(empty folder)", paths=[folder])


TOOLS = (Tool(CONTRACT, run),)
