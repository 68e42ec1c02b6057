"""delete_range: remove the lines between two unique anchor lines, never half a block."""

from __future__ import annotations

from typing import Any

from lsp_server.core.contract import ContractEntry, Hints, PathArg, Tool
from lsp_server.core.errors import EDIT_INVALID, EDIT_NOT_FOUND, EDIT_NOT_UNIQUE, ToolError
from lsp_server.core.tool_output import FileChange, WritePlan
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.brace_balance import BRACE_SUFFIXES, unbalanced_at
from lsp_server.tools._support.file_receipts import receipt
from lsp_server.tools._support.schema_parts import boolean, object_schema, string

CONTRACT = ContractEntry(
    name="delete_range",
    approval_verb="Delete lines in",
    hints=Hints(destructive=True),
    read_only=False,
    kind="edit",
    description=(
        "Delete a range of lines delimited by two anchor lines. Each anchor is the exact "
        "text of one whole line (without its line ending) and must be unique in the file. "
        "In brace languages the range may not cut a {...} block in half. Returns a diff."
    ),
    schema=object_schema(
        {
            "path": string("File path, relative to the workspace root or absolute."),
            "start_anchor": string("The exact text of the first line of the range."),
            "end_anchor": string("The exact text of the last line of the range."),
            "inclusive": boolean("Delete the anchor lines too (default true)."),
        },
        ["path", "start_anchor", "end_anchor"],
    ),
    path_args=(PathArg("path", access="write"),),
)


def _find_anchor(lines: list[str], anchor: str, which: str, label: str) -> int:
    wanted = anchor.rstrip("\r\n")
    hits = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == wanted]
    if not hits:
        raise ToolError(
            EDIT_NOT_FOUND,
            f"the {which} anchor is not a whole line of {label}",
            "copy one complete line exactly (read_file shows it after the '→')",
        )
    if len(hits) > 1:
        numbers = ", ".join(str(i + 1) for i in hits[:20])
        raise ToolError(
            EDIT_NOT_UNIQUE,
            f"the {which} anchor matches {len(hits)} lines of {label} (lines {numbers})",
            "choose a line that occurs once",
            details={"lines": [i + 1 for i in hits]},
        )
    return hits[0]


async def run(ctx: ToolContext, args: dict[str, Any]) -> WritePlan:
    path = ctx.paths["path"]
    label = ctx.workspace.relative(path)
    current, merge = await ctx.files.load_for_edit(path)
    lines = current.text.splitlines(keepends=True)
    try:
        start = _find_anchor(lines, args["start_anchor"], "start", label)
        end = _find_anchor(lines, args["end_anchor"], "end", label)
    except ToolError as exc:
        raise ctx.files.unmerged(merge, exc) from None
    if start > end:
        raise ToolError(
            EDIT_INVALID,
            f"the start anchor (line {start + 1}) comes after the end anchor (line {end + 1})",
            "swap the anchors",
        )
    if not args.get("inclusive", True):
        start, end = start + 1, end - 1
        if start > end:
            raise ToolError(EDIT_INVALID, "nothing lies between the anchors", "nothing to do")
    removed = "".join(lines[start : end + 1])
    if path.suffix.lower() in BRACE_SUFFIXES:
        problem = unbalanced_at(removed)
        if problem:
            raise ToolError(
                EDIT_INVALID,
                f"deleting lines {start + 1}-{end + 1} would cut a {{...}} block in half "
                f"({problem})",
                "extend the range to whole blocks, or use edit_file",
            )
    new_text = "".join(lines[:start] + lines[end + 1 :])
    merged = ctx.files.settle(merge, new_text)
    message = f"deleted lines {start + 1}-{end + 1} of {label}\n" + receipt(
        current.text, new_text, label
    )
    message = message.rstrip("\n") + (f"\n{merged}" if merged else "")
    return WritePlan([FileChange(path, current, new_text)], message)


TOOLS = (Tool(CONTRACT, run),)
