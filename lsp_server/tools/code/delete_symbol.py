"""delete_symbol: remove one definition found by tree-sitter, with its decorators and doc
comment, keeping blank-line separation tidy. A writer: returns a WritePlan."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from lsp_server.codeintel.kinds import KINDS, normalise_kind
from lsp_server.core.contract import ContractEntry, Hints, PathArg, Tool
from lsp_server.core.errors import (
    EDIT_INVALID,
    EDIT_NOT_FOUND,
    EDIT_NOT_UNIQUE,
    INVALID_ARGUMENT,
    ToolError,
)
from lsp_server.core.tool_output import FileChange, WritePlan
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.file_receipts import receipt
from lsp_server.tools._support.schema_parts import integer, object_schema, string

if TYPE_CHECKING:
    pass

CONTRACT = ContractEntry(
    name="delete_symbol",
    approval_verb="Delete a symbol in",
    hints=Hints(destructive=True),
    read_only=False,
    kind="edit",
    description=(
        "Delete one definition (function, method, class, struct, interface, trait, enum, "
        "type, const, var, field) by name, found with tree-sitter, together with its "
        "decorators/attributes and the doc comment directly above it; blank lines stay "
        "tidy. When several definitions share the name, the error lists them as "
        "`line N: kind Parent.name` with the kind/parent/line that picks each. Refuses "
        "declarations that name several symbols, lines shared with other code, and results "
        "that would not parse. Returns a unified diff."
    ),
    schema=object_schema(
        {
            "path": string("File path, relative to the workspace root or absolute."),
            "name": string("The definition's name, without its parents.", minLength=1),
            "kind": string(
                "Only a definition of this kind: " + ", ".join(KINDS) + " (aliases such as "
                "fn, def, func are accepted)."
            ),
            "parent": string(
                "Only a definition inside this parent: a class, type or module name, or a "
                "dotted chain such as Outer.Inner."
            ),
            "line": integer(
                "Only the definition whose lines include this 1-based line (to choose among "
                "overloads with the same kind and parent).",
                minimum=1,
            ),
        },
        ["path", "name"],
    ),
    path_args=(PathArg("path", access="write"),),
)

_ERROR_CODES = {
    "not_found": EDIT_NOT_FOUND,
    "ambiguous": EDIT_NOT_UNIQUE,
    "multi_name": EDIT_INVALID,
    "shared_line": EDIT_INVALID,
    "syntax_error": EDIT_INVALID,
}

_RECOVERY = {
    "not_found": "check the name (code_index outline lists the file's definitions)",
    "ambiguous": "call again with the kind, parent or line shown for the one you mean",
    "multi_name": "use edit_file to change the declaration",
    "shared_line": "use edit_file to change that line",
    "syntax_error": "use edit_file, or read the file to see why the definition is entangled",
}


async def run(ctx: ToolContext, args: dict[str, Any]) -> WritePlan:
    from lsp_server.codeintel.delete import DeleteError, delete_symbol
    from lsp_server.codeintel.languages import LANGUAGES, language_for_path

    path = ctx.paths["path"]
    label = ctx.workspace.relative(path)
    spec = language_for_path(path)
    if spec is None:
        known = ", ".join(spec.name for spec in LANGUAGES)
        raise ToolError(
            INVALID_ARGUMENT,
            f"no grammar covers {label} (by its extension)",
            f"delete_symbol knows {known}; use delete_range or edit_file for other files",
        )
    kind = None
    if args.get("kind"):
        kind = normalise_kind(args["kind"])
        if kind is None:
            raise ToolError(
                INVALID_ARGUMENT, f"unknown kind {args['kind']!r}", f"use one of {', '.join(KINDS)}"
            )
    current = await ctx.files.load_for_write(path)
    source = current.text.encode("utf-8", errors="surrogateescape")
    try:
        deletion = await anyio.to_thread.run_sync(
            delete_symbol, spec, source, args["name"], kind, args.get("parent"), args.get("line")
        )
    except DeleteError as error:
        raise ToolError(
            _ERROR_CODES[error.reason],
            f"{error.message} (in {label})",
            _RECOVERY[error.reason],
            details={"candidates": error.candidates},
        ) from None
    new_text = deletion.new_source.decode("utf-8", errors="surrogateescape")
    symbol = deletion.definition.symbol
    message = (
        f"deleted {symbol.kind} {symbol.qualified_name} (lines {deletion.first_line}-"
        f"{deletion.last_line}, {deletion.removed_lines} lines with blank separators) "
        f"from {label}\n" + receipt(current.text, new_text, label)
    )
    return WritePlan([FileChange(path, current, new_text)], message.rstrip("\n"))


TOOLS = (Tool(CONTRACT, run),)
