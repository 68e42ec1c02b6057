"""edit_file and multi_edit: string replacement through the matching ladder."""

from __future__ import annotations

from typing import Any

from lsp_server.core.contract import ContractEntry, Hints, PathArg, Tool
from lsp_server.core.errors import EDIT_INVALID, EDIT_NO_CHANGE, ToolError
from lsp_server.core.tool_output import FileChange, WritePlan
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support import edit_matching
from lsp_server.tools._support.file_receipts import receipt
from lsp_server.tools._support.schema_parts import boolean, object_schema, string

EDIT_PROPERTIES = {
    "old_string": string(
        "The exact text to replace (copy it from read_file without the line-number prefix)."
    ),
    "new_string": string("The text to put in its place."),
    "replace_all": boolean("Replace every occurrence instead of requiring exactly one."),
}

EDIT_CONTRACT = ContractEntry(
    name="edit_file",
    hints=Hints(destructive=True),
    core=True,
    approval_verb="Edit",
    read_only=False,
    kind="edit",
    description=(
        "Replace old_string with new_string in a file this session has read. old_string must "
        "match exactly one place (or pass replace_all). When there is no exact match, "
        "toolhost tries, in order: LF/CRLF differences, trailing whitespace, indentation, "
        "copied line-number prefixes — and says which level matched. A failure shows the "
        "closest region. Returns a small diff of the change."
    ),
    schema=object_schema(
        {
            "path": string("File path, relative to the workspace root or absolute."),
            **EDIT_PROPERTIES,
        },
        ["path", "old_string", "new_string"],
    ),
    path_args=(PathArg("path", access="write"),),
)

MULTI_EDIT_CONTRACT = ContractEntry(
    name="multi_edit",
    hints=Hints(destructive=True),
    approval_verb="Edit",
    read_only=False,
    kind="edit",
    description=(
        "Apply several edit_file replacements to one file, in order, each seeing the result "
        "of the previous one. All or nothing: if any edit fails, the file is left untouched."
    ),
    schema=object_schema(
        {
            "path": string("File path, relative to the workspace root or absolute."),
            "edits": {
                "type": "array",
                "description": "The replacements, applied in order.",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": EDIT_PROPERTIES,
                    "required": ["old_string", "new_string"],
                    "additionalProperties": False,
                },
            },
        },
        ["path", "edits"],
    ),
    path_args=(PathArg("path", access="write"),),
)


def apply_edit(text: str, edit: dict[str, Any], label: str) -> edit_matching.Replaced:
    old, new = edit["old_string"], edit["new_string"]
    if old == "":
        raise ToolError(
            EDIT_INVALID, "old_string is empty", "use write_file to create or replace a file"
        )
    if old == new:
        raise ToolError(
            EDIT_NO_CHANGE, "old_string and new_string are identical", "nothing to change"
        )
    return edit_matching.replace(text, old, new, bool(edit.get("replace_all")), label)


def _level_note(levels: list[str]) -> str:
    fuzzy = [level for level in levels if level != "exact"]
    return f" (fuzzy match: {', '.join(fuzzy)})" if fuzzy else ""


async def run_edit(ctx: ToolContext, args: dict[str, Any]) -> WritePlan:
    path = ctx.paths["path"]
    label = ctx.workspace.relative(path)
    current, merge = await ctx.files.load_for_edit(path)
    try:
        replaced = apply_edit(current.text, args, label)
    except ToolError as exc:
        raise ctx.files.unmerged(merge, exc) from None
    merged = ctx.files.settle(merge, replaced.text)
    count = f", {replaced.count} replacements" if replaced.count > 1 else ""
    message = f"edited {label}{count}{_level_note([replaced.level])}\n" + receipt(
        current.text, replaced.text, label
    )
    message = message.rstrip("\n") + (f"\n{merged}" if merged else "")
    return WritePlan([FileChange(path, current, replaced.text)], message)


async def run_multi_edit(ctx: ToolContext, args: dict[str, Any]) -> WritePlan:
    path = ctx.paths["path"]
    label = ctx.workspace.relative(path)
    current, merge = await ctx.files.load_for_edit(path)
    text = current.text
    levels = []
    for number, edit in enumerate(args["edits"], start=1):
        try:
            replaced = apply_edit(text, edit, label)
        except ToolError as exc:
            exc = ctx.files.unmerged(merge, exc)
            raise ToolError(
                exc.code,
                f"edit {number}: {exc.cause}; no edit was applied",
                exc.recovery,
                details={"edit": number, **exc.details},
            ) from None
        text = replaced.text
        levels.append(replaced.level)
    merged = ctx.files.settle(merge, text)
    message = f"edited {label} ({len(levels)} edits){_level_note(levels)}\n" + receipt(
        current.text, text, label
    )
    message = message.rstrip("\n") + (f"\n{merged}" if merged else "")
    return WritePlan([FileChange(path, current, text)], message)


TOOLS = (Tool(EDIT_CONTRACT, run_edit), Tool(MULTI_EDIT_CONTRACT, run_multi_edit))
