"""The minimal surface's read, write and edit: thin adapters over the same implementations.

Absolute paths are required (the minimal contract says so); the safety of the full tools
(confinement, observations, atomic writes) applies anyway.
"""

from __future__ import annotations

from typing import Any

from lsp_server.core.contract import ContractEntry, Hints, PathArg, Tool
from lsp_server.core.errors import EDIT_NOT_UNIQUE, ToolError
from lsp_server.core.tool_output import FileChange, ToolOutput, WritePlan
from lsp_server.fs.textio import encode_like
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support import edit_matching
from lsp_server.tools._support.schema_parts import object_schema, string
from lsp_server.tools.files.read_file import cut_long_lines, read_observed
from lsp_server.tools.files.write_file import plan_write

ABSOLUTE_PATH = string("Absolute path of the file.")


READ = ContractEntry(
    name="read",
    read_only=True,
    kind="read",
    minimal=True,
    description="Read a whole text file. Returns its text without line numbers.",
    schema=object_schema({"path": ABSOLUTE_PATH}, ["path"]),
    path_args=(PathArg("path", access="read", absolute=True),),
)

WRITE = ContractEntry(
    name="write",
    hints=Hints(destructive=True, idempotent=True),
    read_only=False,
    kind="edit",
    minimal=True,
    description="Write a whole file (an existing file must have been read first).",
    schema=object_schema(
        {"path": ABSOLUTE_PATH, "content": string("The complete new content.")},
        ["path", "content"],
    ),
    path_args=(PathArg("path", access="write", must_exist=False, absolute=True),),
)

EDIT = ContractEntry(
    name="edit",
    hints=Hints(destructive=True),
    read_only=False,
    kind="edit",
    minimal=True,
    description="Replace the one exact occurrence of old_string with new_string in a file.",
    schema=object_schema(
        {
            "path": ABSOLUTE_PATH,
            "old_string": string("The exact text to replace; it must occur exactly once."),
            "new_string": string("The replacement text."),
        },
        ["path", "old_string", "new_string"],
    ),
    path_args=(PathArg("path", access="write", absolute=True),),
)


async def run_read(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    text_file = await read_observed(ctx)
    limit = ctx.config.limits.max_line_chars
    lines, note = cut_long_lines(text_file.text.splitlines(), limit, ctx.session.results.store)
    return ToolOutput("\n".join([*lines, note] if note else lines))


async def run_write(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput | WritePlan:
    plan = await plan_write(ctx, ctx.paths["path"], args["content"])
    if isinstance(plan, WritePlan):
        change = plan.changes[0]
        text = change.after or ""
        before = change.before
        size = len(encode_like(text, before.encoding, before.bom) if before else text.encode())
        plan.message = f"wrote {size} bytes to {args['path']}"
    return plan


async def run_edit(ctx: ToolContext, args: dict[str, Any]) -> WritePlan:
    path = ctx.paths["path"]
    current = await ctx.files.load_for_write(path)
    old, new = args["old_string"], args["new_string"]
    matches = edit_matching.exact_matches(current.text, old, new)
    label = args["path"]
    if not matches:
        raise edit_matching.not_found(current.text, old, label)
    if len(matches) > 1:
        raise ToolError(
            EDIT_NOT_UNIQUE,
            f"old_string occurs {len(matches)} times in {label}",
            "include more context so it occurs once",
        )
    match = matches[0]
    new_text = current.text[: match.start] + new + current.text[match.end :]
    return WritePlan([FileChange(path, current, new_text)], f"edited {label} (1 replacement)")


TOOLS = (Tool(READ, run_read), Tool(WRITE, run_write), Tool(EDIT, run_edit))
