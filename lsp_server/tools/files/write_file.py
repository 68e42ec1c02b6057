"""write_file: create a file, or replace one this session has observed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from lsp_server.core.contract import ContractEntry, Hints, PathArg, Tool
from lsp_server.core.errors import (
    EDIT_NO_CHANGE,
    EDIT_UNENCODABLE,
    FS_IS_DIRECTORY,
    ToolError,
)
from lsp_server.core.tool_output import FileChange, ToolOutput, WritePlan
from lsp_server.fs.textio import DecodeError, adapt_newlines, encode_like
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.file_receipts import change_summary
from lsp_server.tools._support.schema_parts import object_schema, string

CONTRACT = ContractEntry(
    name="write_file",
    core=True,
    approval_verb="Write",
    hints=Hints(destructive=True, idempotent=True),
    read_only=False,
    kind="edit",
    description=(
        "Write a whole file. Creating a new file (parent folders included) needs no read; "
        "replacing an existing file needs a read of it in this session first, and fails if "
        "the file changed since. Keeps the file's encoding, BOM, line endings and mode. "
        "Prefer edit_file for changing part of a file."
    ),
    schema=object_schema(
        {
            "path": string("File path, relative to the workspace root or absolute."),
            "content": string("The complete new content of the file."),
        },
        ["path", "content"],
    ),
    path_args=(PathArg("path", access="write", must_exist=False),),
)


async def plan_write(ctx: ToolContext, path: Path, content: str) -> ToolOutput | WritePlan:
    label = ctx.workspace.relative(path)
    if await anyio.Path(path).is_dir():
        raise ToolError(FS_IS_DIRECTORY, f"{label} is a directory", "write to a file path")
    if not ctx.existed.get("path", True) or not await anyio.Path(path).exists():
        size = len(content.encode("utf-8"))
        return WritePlan(
            [FileChange(path, None, content)],
            f"wrote {size} bytes to {label} (new file, {_lines(content)})",
        )
    current = await ctx.files.load_for_write(path)
    new_text = content
    if current.newline == "\r\n" and "\r\n" not in content:
        new_text = adapt_newlines(content, "\r\n")
    if new_text == current.text:
        return ToolOutput(f"{EDIT_NO_CHANGE}: {label} already has this content; nothing written")
    try:
        size = len(encode_like(new_text, current.encoding, current.bom))
    except DecodeError as exc:
        raise ToolError(
            EDIT_UNENCODABLE, f"{label}: {exc}", "use only characters the file's encoding has"
        ) from None
    summary = change_summary(current.text, new_text, label)
    return WritePlan(
        [FileChange(path, current, new_text)], f"wrote {size} bytes to {label} ({summary})"
    )


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput | WritePlan:
    return await plan_write(ctx, ctx.paths["path"], args["content"])


TOOLS = (Tool(CONTRACT, run),)


def _lines(content: str) -> str:
    """Lines as an editor counts them: a last line without its newline is one too."""
    count = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return "1 line" if count == 1 else f"{count} lines"
