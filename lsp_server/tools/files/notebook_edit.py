"""notebook_edit: replace, insert or delete one cell of a Jupyter notebook."""

from __future__ import annotations

from typing import Any

import anyio

from lsp_server.core.contract import (
    JSON_SCHEMA_DIALECT,
    ContractEntry,
    Hints,
    PathArg,
    Tool,
)
from lsp_server.core.errors import EDIT_INVALID, ToolError
from lsp_server.core.tool_output import FileChange, WritePlan
from lsp_server.runtime.context import ToolContext

CONTRACT = ContractEntry(
    name="notebook_edit",
    hints=Hints(destructive=True),
    approval_verb="Edit notebook",
    read_only=False,
    kind="edit",
    description=(
        "Edit one cell of a Jupyter notebook (.ipynb). edit_mode: replace (default) sets a "
        "cell's source (a code cell's outputs and execution count are cleared), insert adds a "
        "new cell, delete removes one. Pick the cell by cell_number (0-based position) or "
        "cell_id. insert with cell_number N puts the new cell at position N (N = cell count "
        "appends); with cell_id it goes after that cell; with neither, at the beginning. "
        "Metadata and the outputs of all other cells are kept byte-for-byte, as is the file's "
        "JSON indentation. Read the notebook first (read_file): the edit needs a current read."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["path"],
        "properties": {
            "path": {"type": "string", "description": "The .ipynb file to edit."},
            "cell_number": {
                "type": "integer",
                "minimum": 0,
                "description": "0-based position of the cell (insert: where the new cell goes).",
            },
            "cell_id": {
                "type": "string",
                "minLength": 1,
                "description": "The cell's id (nbformat 4.5+); insert puts the new cell after it.",
            },
            "new_source": {
                "type": "string",
                "description": "The cell's new source text (required for replace and insert).",
            },
            "cell_type": {
                "enum": ["code", "markdown"],
                "description": (
                    "Type of the new or replaced cell; insert defaults to code, replace keeps "
                    "the cell's current type."
                ),
            },
            "edit_mode": {
                "enum": ["replace", "insert", "delete"],
                "description": "What to do (default replace).",
            },
        },
    },
    path_args=(PathArg("path", access="write"),),
)


async def run(ctx: ToolContext, args: dict[str, Any]) -> WritePlan:
    path = ctx.paths["path"]
    if path.suffix.lower() != ".ipynb":
        raise ToolError(
            EDIT_INVALID,
            f"{ctx.workspace.relative(path)} is not a .ipynb notebook",
            "use edit_file for other files",
        )
    # Imported on first use: nbformat costs a noticeable part of server start-up.
    from lsp_server.notebook.edit import CellEdit, apply_cell_edit

    current = await ctx.files.load_for_write(path)
    edit = CellEdit(
        mode=args.get("edit_mode", "replace"),
        cell_number=args.get("cell_number"),
        cell_id=args.get("cell_id"),
        new_source=args.get("new_source"),
        cell_type=args.get("cell_type"),
    )
    # nbformat validation of a large notebook is CPU work: keep it off the event loop.
    result = await anyio.to_thread.run_sync(apply_cell_edit, current.text, edit)
    return WritePlan(
        changes=[
            FileChange(
                path=path,
                before=current,
                after=result.text,
                # Verbatim: the spliced JSON already has the file's own newlines.
                raw_after=current.bom + result.text.encode("utf-8"),
            )
        ],
        message=(
            f"edited {ctx.workspace.relative(path)}: {result.summary}; "
            f"the notebook now has {result.cell_count} cell(s)"
        ),
    )


TOOLS = (Tool(CONTRACT, run),)
