"""The minimal surface's grep: `{pattern, path, include?, ignore_case?}` over the same
search as the full grep (same engines, ignore rules and secret filtering).

Output rows are `path:line: text` with absolute paths (the minimal surface speaks absolute
paths), and `(truncated at N matches)` when search.max_results cuts the list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.schema_parts import boolean, object_schema, string
from lsp_server.tools.search.grep import DEFAULT_TIMEOUT_SECONDS, search

if TYPE_CHECKING:
    pass

CONTRACT = ContractEntry(
    name="grep",
    read_only=True,
    kind="read",
    minimal=True,
    description=(
        "Search file contents with a regular expression (Rust regex syntax, as ripgrep). "
        "Returns `path:line: text` rows."
    ),
    schema=object_schema(
        {
            "pattern": string("The regular expression.", minLength=1),
            "path": string("Absolute path of the file or folder to search."),
            "include": string('Only files matching this glob, e.g. "*.py".'),
            "ignore_case": boolean("Match case-insensitively."),
        },
        ["pattern", "path"],
    ),
    path_args=(PathArg("path", access="read", absolute=True),),
)


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    from lsp_server.search.render import NO_MATCHES, printable_path, stopped_note

    target = ctx.paths["path"]
    outcome, base = await search(
        ctx,
        target,
        args["pattern"],
        include=args.get("include"),
        ignore_case=args.get("ignore_case", False),
    )
    cap = ctx.config.search.max_results
    rows: list[str] = []
    for hits in outcome.files:
        for line in hits.lines:
            if line.is_match and len(rows) < cap:
                rows.append(f"{printable_path(str(base / hits.path))}:{line.number}: {line.text}")
    if outcome.total_matched_lines > len(rows):
        rows.append(f"(truncated at {len(rows)} matches)")
    if outcome.timed_out:
        rows.append(stopped_note(DEFAULT_TIMEOUT_SECONDS, "the matches found so far"))
    rows += outcome.notes
    return ToolOutput("\n".join(rows) or NO_MATCHES, paths=[target])


TOOLS = (Tool(CONTRACT, run),)
