"""ls: a folder's entries, sorted; folders marked with "/", files with their size."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import anyio

from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.schema_parts import boolean, integer, object_schema, string
from lsp_server.tools.search.grep import engines_of, excluded_patterns, ignore_base_for
from lsp_server.tools.search.result_screen import secret_test

MAX_ENTRIES = 5000
DEFAULT_TIMEOUT_SECONDS = 30.0
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
        f"ignores, and secret files. At most {MAX_ENTRIES} entries a page, and how many there "
        "are in all; offset lists the next page."
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
            "offset": integer(
                f"Skip this many entries first (the next page of a folder of more than "
                f"{MAX_ENTRIES}; default 0).",
                minimum=0,
            ),
            "timeout_seconds": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 300,
                "description": "Stop after this long and list what was seen (default 30).",
            },
        },
        [],
    ),
    path_args=(PathArg("path", access="read", default="."),),
)


def _listing(
    ctx: ToolContext, folder: Path, depth: int, timeout: float, offset: int
) -> tuple[list[str], int, bool]:
    """(rows, entries in all, stopped by the time limit)."""
    from lsp_server.search.folder_pages import list_folder
    from lsp_server.search.render import printable_path, unsearched_note

    if not folder.is_dir():
        rel = printable_path(ctx.workspace.relative(folder))
        return [f"{rel}\t{folder.stat().st_size}"], 0, False
    unreadable: list[tuple[str, str]] = []
    excluded = excluded_patterns(ctx)
    is_secret = ctx.workspace.is_secret
    page = list_folder(
        folder,
        depth=depth,
        ignore_base=ignore_base_for(ctx, folder),
        excluded=excluded,
        limit=MAX_ENTRIES,
        timeout_seconds=timeout,
        unreadable=unreadable,
        # The deny list went to the walk; without one, every entry is checked.
        keep=None if excluded else (lambda path: not is_secret(Path(path))),
        offset=offset,
    )
    secret = secret_test(ctx, engines_of(ctx), folder)  # is_secret: ~0.3 ms a path
    shown = [entry for entry in page.entries if not secret(entry.relative)]
    rows = [entry.row() for entry in shown]
    prefix = ctx.workspace.relative(folder / "x")[:-1]
    skipped = [
        (path.removeprefix(str(folder).rstrip("/") + "/"), why)
        for path, why in unreadable
        if not ctx.workspace.is_secret(Path(path))
    ]
    note = unsearched_note(skipped, prefix.__add__, "listed")
    return rows + ([note] if note else []), page.total, page.timed_out


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    from lsp_server.search.render import stopped_note

    folder = ctx.paths["path"]
    ctx.workspace.require_not_secret(folder)
    depth = args.get("depth") or (DEFAULT_RECURSIVE_DEPTH if args.get("recursive") else 1)
    timeout = float(args.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS))
    offset = int(args.get("offset", 0))
    rows, total, timed_out = await anyio.to_thread.run_sync(
        partial(_listing, ctx, folder, depth, timeout, offset), abandon_on_cancel=True
    )
    shown = sum(1 for row in rows if not row.startswith("[not listed"))
    if offset and not shown and total and not timed_out:
        rows.append(f"[nothing past offset {offset}: {total} entries in all]")
    elif offset + shown < total or (offset and total):
        first, last = offset + 1, offset + shown
        rows.append(
            f"[... entries {first}-{last} of {total} shown, in name order; "
            + (f"offset={last} lists the next ones, " if last < total else "")
            + "or list a subfolder, lower depth, or use glob]"
        )
    if timed_out:
        rows.append(stopped_note(timeout, "the entries seen so far, the total is a lower bound"))
    return ToolOutput("\n".join(rows) or "(empty folder)", paths=[folder])


TOOLS = (Tool(CONTRACT, run),)
