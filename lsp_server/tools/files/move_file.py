"""move_file: rename a file this session has observed, never replacing the destination."""

from __future__ import annotations

from typing import Any

from lsp_server.core.contract import ContractEntry, Hints, PathArg, Tool
from lsp_server.core.errors import FS_ALREADY_EXISTS, FS_IS_DIRECTORY, ToolError
from lsp_server.core.tool_output import FileChange, WritePlan
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.schema_parts import object_schema, string

CONTRACT = ContractEntry(
    name="move_file",
    approval_verb="Move",
    hints=Hints(destructive=True),
    read_only=False,
    kind="edit",
    description=(
        "Move or rename a file inside the workspace. The source must have been read in this "
        "session (and be unchanged since); the destination must not exist. Folders are created "
        "as needed. Files only."
    ),
    schema=object_schema(
        {
            "source_path": string("The file to move."),
            "destination_path": string("Where it goes; must not exist yet."),
        },
        ["source_path", "destination_path"],
    ),
    path_args=(
        PathArg("source_path", access="write"),
        PathArg("destination_path", access="write", must_exist=False),
    ),
)


async def run(ctx: ToolContext, args: dict[str, Any]) -> WritePlan:
    source = ctx.paths["source_path"]
    destination = ctx.paths["destination_path"]
    src_label = ctx.workspace.relative(source)
    dest_label = ctx.workspace.relative(destination)
    if source.is_dir():
        raise ToolError(
            FS_IS_DIRECTORY, f"{src_label} is a directory", "move folders with bash (git mv)"
        )
    if destination.is_dir() and not destination.is_symlink():
        inside = ctx.workspace.relative(destination / source.name)
        raise ToolError(
            FS_ALREADY_EXISTS,
            f"{dest_label} is a folder (destination_path names the file's new path)",
            f'to move it into that folder, pass destination_path "{inside}"',
        )
    if destination.exists() or destination.is_symlink():
        raise ToolError(
            FS_ALREADY_EXISTS, f"{dest_label} already exists", "choose a destination that is free"
        )
    current = await ctx.files.load_for_write(source)
    change = FileChange(source, current, current.text, destination=destination)
    return WritePlan([change], f"moved {src_label} -> {dest_label}")


TOOLS = (Tool(CONTRACT, run),)
