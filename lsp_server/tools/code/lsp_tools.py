"""lsp_definition, lsp_references, lsp_hover, lsp_diagnostics: real language servers.

The file's current text (editor buffer or disk) is synced to the server for the
(workspace root, language) before each question; `line` + `symbol` become an LSP position
in the encoding the server negotiated. Answers are workspace-relative `path:line: source`
rows, sorted and deduplicated. Failures are lsp.* errors, never an empty list.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_server.config.tree import LspConfig
from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.errors import INVALID_ARGUMENT, ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.langservers.answer_log import LspAnswerLog
from lsp_server.langservers.positions import (
    SymbolNotOnLine,
    find_symbol,
    from_lsp_character,
    split_lines,
    to_lsp_character,
)
from lsp_server.langservers.table import row_for_extension
from lsp_server.runtime.context import ToolContext
from lsp_server.runtime.results.bounding import cut_line
from lsp_server.tools._support.schema_parts import boolean, integer, object_schema, string
from lsp_server.tools.code.editor_servers import Provenance, ask_editor, document_uri
from lsp_server.tools.code.symbol_lookup import locate_definition

if TYPE_CHECKING:  # loaded with the first lsp_* call, not with the tool registry
    from lsp_server.langservers.child import LanguageServerClient, OpenDocument
    from lsp_server.langservers.manager import LanguageServerManager
    from lsp_server.langservers.operations import Location

_POSITION_PROPERTIES: dict[str, Any] = {
    "path": string(
        "File containing the symbol, relative to the workspace root or absolute (default: "
        "the one definition named `symbol` in the code index)."
    ),
    "line": integer("1-based line on which the symbol appears.", minimum=1),
    "symbol": string(
        "The symbol's text as written on that line (e.g. a function name).", minLength=1
    ),
    "column": integer(
        "1-based column inside the symbol, when it occurs more than once on the line "
        "(default: its first whole-word occurrence).",
        minimum=1,
    ),
}
_POSITION_HELP = (
    "Give `path`, `line` (1-based) and the `symbol` text on that line; `column` picks one "
    "occurrence when the symbol appears several times on the line. `symbol` alone finds its "
    "one definition through the code index."
)


def _contract(name: str, summary: str, extra: dict[str, Any] | None = None) -> ContractEntry:
    return ContractEntry(
        name=name,
        read_only=True,
        kind="read",
        description=f"{summary} {_POSITION_HELP}",
        schema=object_schema({**_POSITION_PROPERTIES, **(extra or {})}, ["symbol"]),
        path_args=(PathArg("path", access="read"),),
    )


DEFINITION = _contract(
    "lsp_definition",
    "Go to definition through the project's real language server (pyright, "
    "typescript-language-server, gopls, clangd, ...). Returns `path:line: source` rows.",
)
REFERENCES = _contract(
    "lsp_references",
    "Find every reference to a symbol through the project's real language server. Returns "
    "sorted `path:line: source` rows (one per line).",
    {
        "include_declaration": boolean("Also list the declaration itself (default true)."),
        "limit": integer("Most rows to return (default 200).", minimum=1, maximum=5000),
    },
)
HOVER = _contract(
    "lsp_hover",
    "The language server's hover text for a symbol: its type or signature and documentation.",
)
DIAGNOSTICS = ContractEntry(
    name="lsp_diagnostics",
    read_only=True,
    kind="read",
    description=(
        "Errors and warnings the project's real language server reports for a file's "
        "current content (editor buffer or disk), as `line:column severity [source] message`."
    ),
    schema=object_schema(
        {"path": string("File to check, relative to the workspace root or absolute.")}, ["path"]
    ),
    path_args=(PathArg("path", access="read"),),
)


MAX_SYMBOL_CHARS = 1000
"""Longer than any name on a line: such a `symbol` is refused before it reaches the code
index (SQLite) or rg's argument list."""


def _check_symbol(symbol: str) -> None:
    if len(symbol) > MAX_SYMBOL_CHARS:
        raise ToolError(
            INVALID_ARGUMENT,
            f"`symbol` has {len(symbol)} characters; a symbol is at most {MAX_SYMBOL_CHARS}",
            "pass the symbol's name as written on its line (e.g. a function name)",
        )


async def _document_text(ctx: ToolContext, args: dict[str, Any]) -> tuple[Path, Path, str]:
    _check_symbol(str(args.get("symbol", "")))
    if "path" not in ctx.paths:
        # A bare name: its one definition, found through the code index.
        ctx.paths["path"], args["line"] = await locate_definition(ctx, str(args["symbol"]))
    path = ctx.paths["path"]
    if _is_secret(ctx, path):
        ctx.workspace.require_not_secret(path)  # raises the standard refusal
    root = ctx.workspace.root_of(path) or ctx.workspace.primary_root
    return root, path, await _current_text(ctx, path)


async def _current_text(ctx: ToolContext, path: Path) -> str:
    """The editor buffer when the file is open there, else the disk text (cached by stat)."""
    documents = ctx.files.documents
    buffer = documents.open_document(path) if documents is not None else None
    if buffer is not None:
        return buffer.text

    async def read(target: Path) -> str:
        return (await ctx.files.read_text(target)).text

    return await _manager(ctx).texts.text(path, read)


def _symbol_index(text: str, args: dict[str, Any], display: str) -> tuple[int, str, int]:
    """(0-based line, that line's text, code-point index of the symbol)."""
    if "line" not in args:
        raise ToolError(
            INVALID_ARGUMENT,
            "`line` is missing",
            "pass the 1-based line on which the symbol appears",
        )
    lines = split_lines(text)
    number = int(args["line"])
    # A final newline ends the last line; it does not start one more.
    shown = len(lines) - 1 if len(lines) > 1 and lines[-1] == "" else len(lines)
    if number > shown:
        raise ToolError(
            INVALID_ARGUMENT,
            f"{display} has {shown} lines; line {number} does not exist",
            "pass a line inside the file",
        )
    line_text = lines[number - 1]
    try:
        index = find_symbol(line_text, str(args["symbol"]), args.get("column"))
    except SymbolNotOnLine as exc:
        raise ToolError(
            INVALID_ARGUMENT,
            f"{exc} ({display}:{number} is: {cut_line(line_text.strip(), 200)!r})",
            "pass the symbol exactly as written on that line, or the right line",
        ) from None
    return number - 1, line_text, index


def _manager(ctx: ToolContext) -> LanguageServerManager:
    from lsp_server.langservers.manager import LanguageServerManager

    return ctx.services.get(LanguageServerManager)


def _is_secret(ctx: ToolContext, path: Path) -> bool:
    """Secret-pattern matching (pathspec, many patterns) costs about as much as a warm
    definition request; a workspace's patterns never change, so verdicts are kept."""
    verdicts = _manager(ctx).secret_verdicts.setdefault(ctx.workspace, {})
    verdict = verdicts.get(path)
    if verdict is None:
        if len(verdicts) > 4096:
            verdicts.clear()
        verdict = verdicts[path] = ctx.workspace.is_secret(path)
    return verdict


async def _locations(
    ctx: ToolContext, args: dict[str, Any], method: str
) -> tuple[str, str, Provenance]:
    """Ask for definition or references; -> (rows text, display of the position, who
    answered)."""
    from lsp_server.langservers import operations

    root, path, text = await _document_text(ctx, args)
    display = ctx.workspace.relative(path)
    line, line_text, index = _symbol_index(text, args, display)
    config: LspConfig = ctx.config.lsp
    include = bool(args.get("include_declaration", True))
    where = f"`{args['symbol']}` at {display}:{line + 1}"
    uri, version = document_uri(ctx, path)
    params = _position_params(uri, line, to_lsp_character(line_text, index, "utf-16"))
    if method == "references":
        params["context"] = {"includeDeclaration": include}
    editor = await ask_editor(ctx, f"textDocument/{method}", params)
    if editor is not None:
        provenance = _record(ctx, path, Provenance("editor", editor.server, version))
        rows = await _format_locations(
            ctx, operations.parse_locations(editor.result), args.get("limit")
        )
        return rows, where, provenance
    answered: list[str] = []

    async def ask(client: LanguageServerClient, document: OpenDocument) -> list[Location]:
        answered.append(client.name)
        character = to_lsp_character(line_text, index, client.encoding)
        if method == "definition":
            return await operations.definition(client, document, line, character, config)
        return await operations.references(client, document, line, character, include, config)

    found = await _manager(ctx).call(root, path, text, ask)
    provenance = _record(ctx, path, Provenance("toolhost", answered[-1], version))
    return await _format_locations(ctx, found, args.get("limit")), where, provenance


def _position_params(uri: str, line: int, character: int) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def _record(ctx: ToolContext, path: Path, provenance: Provenance) -> Provenance:
    """Note who answered for this language (toolhost/status shows it)."""
    row = row_for_extension(path.suffix)
    language = row.name if row is not None else (path.suffix.lstrip(".") or path.name)
    log = ctx.services.get(LspAnswerLog)
    log.record(language, provenance.answered_by, provenance.server)
    return provenance


def _with_provenance(text: str, provenance: Provenance) -> ToolOutput:
    return ToolOutput(f"{text}\n{provenance.line()}")


async def _format_locations(ctx: ToolContext, found: list[Location], limit: int | None) -> str:
    rows: dict[tuple[str, int], str] = {}
    texts: dict[Path, list[str] | None] = {}
    max_chars = ctx.config.limits.max_line_chars
    for location in found:
        if location.path is None:
            rows.setdefault((location.uri, location.line), f"{location.uri}:{location.line + 1}")
            continue
        display = ctx.workspace.relative(location.path)
        key = (display, location.line)
        if key in rows:
            continue
        if location.path not in texts:
            texts[location.path] = await _source_lines(ctx, location.path)
        lines = texts[location.path]
        if lines is None:
            rows[key] = f"{display}:{location.line + 1}: (outside the workspace)"
        else:
            source = lines[location.line].strip() if location.line < len(lines) else ""
            whole = f": read_file offset={location.line} limit=1 shows the line"
            rows[key] = f"{display}:{location.line + 1}: {cut_line(source, max_chars, whole)}"
    ordered = [rows[key] for key in sorted(rows)]
    if limit is not None and len(ordered) > limit:
        hidden = len(ordered) - limit
        ordered = [*ordered[:limit], f"({hidden} more not shown; pass a larger limit)"]
    return "\n".join(ordered)


async def _source_lines(ctx: ToolContext, path: Path) -> list[str] | None:
    """The file's lines for display; None outside the workspace or for secrets."""
    if not ctx.workspace.contains(path, "read") or _is_secret(ctx, path):
        return None
    try:
        return split_lines(await _current_text(ctx, path))
    except ToolError:
        return None


async def run_definition(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    rows, where, provenance = await _locations(ctx, args, "definition")
    text = rows or f"No definition found for {where} (the language server has none)."
    return _with_provenance(text, provenance)


async def run_references(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    args = {**args, "limit": args.get("limit", 200)}
    rows, where, provenance = await _locations(ctx, args, "references")
    text = rows or f"No references found for {where} (the language server has none)."
    return _with_provenance(text, provenance)


async def run_hover(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    from lsp_server.langservers import operations

    root, path, text = await _document_text(ctx, args)
    display = ctx.workspace.relative(path)
    line, line_text, index = _symbol_index(text, args, display)
    config: LspConfig = ctx.config.lsp
    uri, version = document_uri(ctx, path)
    params = _position_params(uri, line, to_lsp_character(line_text, index, "utf-16"))
    editor = await ask_editor(ctx, "textDocument/hover", params)
    if editor is not None:
        found = operations.hover_text(editor.result)
        provenance = _record(ctx, path, Provenance("editor", editor.server, version))
    else:
        answered: list[str] = []

        async def ask(client: LanguageServerClient, document: OpenDocument) -> str:
            answered.append(client.name)
            character = to_lsp_character(line_text, index, client.encoding)
            return await operations.hover(client, document, line, character, config)

        found = await _manager(ctx).call(root, path, text, ask)
        provenance = _record(ctx, path, Provenance("toolhost", answered[-1], version))
    if not found:
        found = (
            f"No hover information for `{args['symbol']}` at {display}:{line + 1} "
            "(the language server has none)."
        )
    return _with_provenance(found, provenance)


_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


async def run_diagnostics(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    from lsp_server.langservers import operations

    root, path, text = await _document_text(ctx, args)
    display = ctx.workspace.relative(path)
    config: LspConfig = ctx.config.lsp
    uri, version = document_uri(ctx, path)
    editor = await ask_editor(ctx, "textDocument/diagnostic", {"textDocument": {"uri": uri}})
    if editor is not None:
        rows = format_diagnostics(_report_items(editor.result), split_lines(text), "utf-16")
        provenance = _record(ctx, path, Provenance("editor", editor.server, version))
    else:
        answered: list[str] = []

        async def ask(client: LanguageServerClient, document: OpenDocument) -> list[str]:
            answered.append(client.name)
            found = await operations.diagnostics(client, document, config)
            return format_diagnostics(found, split_lines(text), client.encoding)

        rows = await _manager(ctx).call(root, path, text, ask)
        provenance = _record(ctx, path, Provenance("toolhost", answered[-1], version))
    header = f"{len(rows)} diagnostic(s) in {display}" + (":" if rows else ".")
    return _with_provenance("\n".join([header, *rows]), provenance)


def _report_items(result: Any) -> list[Any]:
    """A DocumentDiagnosticReport ({kind, items}) or a plain list of diagnostics."""
    if isinstance(result, dict):
        items = result.get("items")
        return items if isinstance(items, list) else []
    return result if isinstance(result, list) else []


def format_diagnostics(found: list[Any], lines: list[str], encoding: Any) -> list[str]:
    """`L:C severity [source] message (code)`, 1-based, columns in characters, sorted."""
    keyed: list[tuple[int, int, str]] = []
    for item in found:
        if not isinstance(item, dict):
            continue
        start = (item.get("range") or {}).get("start") or {}
        line = start.get("line", 0) if isinstance(start.get("line"), int) else 0
        character = start.get("character", 0) if isinstance(start.get("character"), int) else 0
        line_text = lines[line] if line < len(lines) else ""
        column = from_lsp_character(line_text, character, encoding) + 1
        severity = _SEVERITY.get(item.get("severity", 1), "error")
        source = f" [{item['source']}]" if item.get("source") else ""
        message = " ".join(str(item.get("message", "")).split())
        code = item.get("code")
        suffix = f" ({code})" if code not in (None, "") else ""
        keyed.append((line, column, f"{line + 1}:{column} {severity}{source} {message}{suffix}"))
    return [row for *_, row in sorted(set(keyed))]


TOOLS = (
    Tool(DEFINITION, run_definition),
    Tool(REFERENCES, run_references),
    Tool(HOVER, run_hover),
    Tool(DIAGNOSTICS, run_diagnostics),
)
