"""code_index: outline of a file or folder, and symbol search over the workspace, from
tree-sitter and the persistent symbol index (lsp_server.codeintel)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread

from lsp_server.codeintel.kinds import KINDS, normalise_kind
from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.errors import INVALID_ARGUMENT, ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.schema_parts import integer, object_schema, string

if TYPE_CHECKING:
    from lsp_server.codeintel.indexes import CodeIndexService
    from lsp_server.codeintel.outline import Symbol

DEFAULT_LIMIT = 100
MAX_LIMIT = 500
MAX_QUERY_CHARS = 1000
DEFAULT_TIMEOUT_SECONDS = 30.0

CONTRACT = ContractEntry(
    name="code_index",
    read_only=True,
    kind="read",
    description=(
        "Code intelligence with tree-sitter in Python, JavaScript, TypeScript/TSX, Go, Rust, "
        "Java, C, C++, C#, Ruby and Bash. action=outline lists the definitions of a file or "
        "folder as `path:line: kind Parent.name — signature`; action=search finds definitions "
        "by name across the workspace (exact first, then case-insensitive, prefix, "
        "substring), optionally filtered by kind, from a persistent index that stays fresh "
        "by itself."
    ),
    schema=object_schema(
        {
            "action": string("outline or search.", enum=["outline", "search"]),
            "path": string(
                "File or folder to outline, or folder to search in (default: the workspace)."
            ),
            "query": string("search: the name, or part of it, to look for.", minLength=1),
            "kind": string(
                "Only definitions of this kind: " + ", ".join(KINDS) + " (aliases such as fn, "
                "def, func are accepted)."
            ),
            "limit": integer(
                f"Maximum definitions listed (default {DEFAULT_LIMIT}).",
                minimum=1,
                maximum=MAX_LIMIT,
            ),
            "timeout_seconds": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 300,
                "description": "search before the index is built: stop after this long and "
                "list what was found (default 30).",
            },
        },
        ["action"],
    ),
    path_args=(PathArg("path", access="read", default="."),),
)


def index_service(ctx: ToolContext) -> CodeIndexService:
    """The runtime's index service (compose.py installs it; a one-shot `toolhost call`
    gets one without background builds)."""
    from lsp_server.codeintel.indexes import CodeIndexService

    return ctx.services.get(CodeIndexService)


def _root_of(ctx: ToolContext, path: Path) -> Path:
    for root in ctx.workspace.roots:
        if path == root or root in path.parents:
            return root
    return path if path.is_dir() else path.parent


def _kind(args: dict[str, Any]) -> str | None:
    if not args.get("kind"):
        return None
    kind = normalise_kind(args["kind"])
    if kind is None:
        raise ToolError(
            INVALID_ARGUMENT, f"unknown kind {args['kind']!r}", f"use one of {', '.join(KINDS)}"
        )
    return kind


def _line(label: str, symbol: Symbol) -> str:
    return (
        f"{label}:{symbol.start_line}: {symbol.kind} {symbol.qualified_name} — {symbol.signature}"
    )


def _trailer(shown: int, total_known: int | None, limit: int) -> str:
    if shown < limit:
        return ""
    more = f" of {total_known}" if total_known else ""
    return f"\n[{shown}{more} definitions shown (limit {limit}); narrow the path or raise limit]"


class _ProgressBridge:
    """Turns the index's (done, total) callback in a worker thread into $/progress."""

    def __init__(self, ctx: ToolContext, what: str) -> None:
        self._ctx = ctx
        self._what = what
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self._ctx.progress.enabled or (now - self._last < 0.2 and done < total):
            return
        self._last = now
        percentage = int(100 * done / total) if total else 100
        message = f"{self._what}: {done}/{total} files"
        anyio.from_thread.run(self._ctx.progress.report, message, percentage)


async def _outline_file(ctx: ToolContext, path: Path, kind: str | None, limit: int) -> str:
    from lsp_server.codeintel.languages import language_for_path
    from lsp_server.codeintel.outline import outline

    label = ctx.workspace.relative(path)
    spec = language_for_path(path)
    if spec is None:
        raise ToolError(
            INVALID_ARGUMENT,
            f"no grammar covers {label} (by its extension)",
            "outline a source file or a folder; read_file shows other files",
        )
    text_file = await ctx.files.read_text(path)
    source = text_file.text.encode("utf-8", errors="surrogateescape")
    symbols = await anyio.to_thread.run_sync(outline, spec.name, source)
    symbols = [s for s in symbols if kind is None or s.kind == kind]
    if not symbols:
        return f"no definitions{f' of kind {kind}' if kind else ''} in {label}"
    lines = [_line(label, s) for s in symbols[:limit]]
    return "\n".join(lines) + _trailer(min(len(symbols), limit), len(symbols), limit)


async def _outline_folder(ctx: ToolContext, folder: Path, kind: str | None, limit: int) -> str:
    root = _root_of(ctx, folder)
    index = await anyio.to_thread.run_sync(index_service(ctx).index_for, root)
    rel = "" if folder == root else folder.relative_to(root).as_posix()
    progress = _ProgressBridge(ctx, "indexing")

    def sync_folder() -> None:
        index.apply_changes()
        index.refresh(progress, folder=rel)

    await anyio.to_thread.run_sync(sync_folder)
    rows = await anyio.to_thread.run_sync(index.symbols_under, rel + "/" if rel else "")
    rows = [(p, s) for p, s in rows if kind is None or s.kind == kind]
    label = ctx.workspace.relative(folder)
    if not rows:
        return f"no definitions{f' of kind {kind}' if kind else ''} under {label}"
    lines = [_line(ctx.workspace.relative(root / p), s) for p, s in rows[:limit]]
    return "\n".join(lines) + _trailer(min(len(rows), limit), len(rows), limit)


def _search_index(
    service: CodeIndexService, root: Path, query: str, kind: str | None, limit: int,
    folder: str, timeout: float = DEFAULT_TIMEOUT_SECONDS,
) -> tuple[list[tuple[str, Symbol]], bool, bool]:  # fmt: skip
    """(rows, cold, stopped by the time limit): a complete index is swept and queried;
    otherwise the files that mention the name are parsed now, and then the full build
    starts in the background (not before: it would compete with this search)."""
    index = service.index_for(root)  # opening the SQLite file blocks: a worker thread
    if index.is_complete:
        index.ensure_fresh()
        return index.search(query, kind, limit, folder=folder), False, False
    try:
        cold = index.search_mentions(query, kind, limit, folder=folder, timeout_seconds=timeout)
    finally:
        if service.background_builds:
            service.start_build(index.root)
    return cold.rows, True, cold.timed_out


async def _search(
    ctx: ToolContext, path: Path, is_dir: bool, args: dict[str, Any], limit: int
) -> str:
    query = args.get("query")
    if not query:
        raise ToolError(INVALID_ARGUMENT, "search needs a query", "pass query: the name to find")
    if len(query) > MAX_QUERY_CHARS:  # a name, never this long; rg would refuse it as argv
        raise ToolError(
            INVALID_ARGUMENT,
            f"query has {len(query)} characters; a name to search is at most {MAX_QUERY_CHARS}",
            "pass the name, or part of it, as written in the code (e.g. a function name)",
        )
    kind = _kind(args)
    service = index_service(ctx)
    root = _root_of(ctx, path)
    folder = "" if path == root else path.relative_to(root).as_posix()
    folder = folder + "/" if folder and is_dir else folder
    timeout = float(args.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS))
    rows, cold, stopped = await anyio.to_thread.run_sync(
        _search_index, service, root, query, kind, limit, folder, timeout
    )
    where = ctx.workspace.relative(path)
    if stopped:
        from lsp_server.search.render import stopped_note

        lines = [_line(ctx.workspace.relative(root / p), s) for p, s in rows]
        so_far = "the definitions in the files parsed so far; narrow the path"
        return "\n".join([*lines, stopped_note(timeout, so_far)])
    if not rows:
        return f"no definition matches {query!r}{f' of kind {kind}' if kind else ''} in {where}"
    lines = [_line(ctx.workspace.relative(root / p), s) for p, s in rows]
    note = ""
    if cold and service.background_builds:
        note = "\n[the workspace index is still being built; these come from the files that "
        note += "mention the name]"
    elif cold:
        note = "\n[no workspace index yet (`toolhost index` builds it); these come from the "
        note += "files that mention the name]"
    return "\n".join(lines) + _trailer(len(rows), None, limit) + note


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    path = ctx.paths["path"]
    limit = int(args.get("limit", DEFAULT_LIMIT))
    is_dir = await anyio.to_thread.run_sync(path.is_dir)
    if args["action"] == "search":
        return ToolOutput(await _search(ctx, path, is_dir, args, limit))
    kind = _kind(args)
    if is_dir:
        text = await _outline_folder(ctx, path, kind, limit)
    else:
        text = await _outline_file(ctx, path, kind, limit)
    ctx.progress.end()
    return ToolOutput(text, paths=[path])


TOOLS = (Tool(CONTRACT, run),)
