"""grep: regex search over the workspace on ripgrep (or the pure-Python engine)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.errors import (
    FS_NOT_A_FILE,
    GREP_INVALID_REGEX,
    INTERNAL_ERROR,
    INVALID_ARGUMENT,
    ToolError,
)
from lsp_server.core.tool_output import ToolOutput
from lsp_server.fs import beneath, hardlinks
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.schema_parts import boolean, integer, object_schema, string
from lsp_server.tools.search.result_screen import ResultScreen, secret_test

if TYPE_CHECKING:
    from lsp_server.search.engines import EngineChoice, SearchEngines
    from lsp_server.search.query import OutputMode, SearchOutcome, SearchQuery

DEFAULT_TIMEOUT_SECONDS = 30.0
MAX_PATTERN_BYTES = 64 * 1024
"""A pattern or include glob longer than this is refused: it would go to rg as one argument,
and Linux refuses one of 128 KiB or more."""
MAX_TIMEOUT_SECONDS = 300.0

CONTRACT = ContractEntry(
    name="grep",
    read_only=True,
    kind="read",
    description=(
        "Search file contents with a regular expression (Rust regex syntax, as ripgrep: "
        "no look-around or back-references; escape ( ) [ ] { } . * + ? | \\ for literal "
        "text). Respects .gitignore; skips hidden, binary and secret files. Output "
        "`path:line:text` rows (context lines `path-line-text`, groups split by `--`), "
        "sorted by path then line, lines cut at 500 characters; the last line gives the "
        "true totals when max_results cuts the list."
    ),
    schema=object_schema(
        {
            "pattern": string("The regular expression (Rust regex syntax).", minLength=1),
            "path": string(
                "File or folder to search, relative to the workspace root or absolute "
                "(default: the workspace root)."
            ),
            "include": string(
                'Only files matching this glob, e.g. "*.py", "src/**/*.{ts,tsx}"; a '
                "leading ! excludes instead."
            ),
            "ignore_case": boolean("Match case-insensitively (default false)."),
            "output_mode": {
                "enum": ["content", "files_with_matches", "count"],
                "description": (
                    "content: matching lines (default); files_with_matches: one path a "
                    "line; count: `path:N` matching lines per file."
                ),
            },
            "context": integer(
                "Lines of context before and after each match (content mode).",
                minimum=0,
                maximum=10,
            ),
            "multiline": boolean(
                "Let a match span lines (\\n in the pattern; . still stops at a newline "
                "unless (?s) is used)."
            ),
            "max_results": integer(
                "At most this many matching lines (or files) are listed; default 200.",
                minimum=1,
                maximum=100_000,
            ),
            "timeout_seconds": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": MAX_TIMEOUT_SECONDS,
                "description": "Stop searching after this long and report what was found "
                "(default 30).",
            },
        },
        ["pattern"],
    ),
    path_args=(PathArg("path", access="read", default="."),),
)


def excluded_patterns(ctx: ToolContext) -> tuple[str, ...]:
    """The workspace's secret deny list as engine globs. When the user allows some secret
    paths, the engines get no list and the results are filtered by is_secret instead
    (a glob list cannot express "except these")."""
    if ctx.config.workspace.allowed_secrets:
        return ()
    return tuple(ctx.workspace.secret_patterns)


def engines_of(ctx: ToolContext) -> SearchEngines:
    """The server-wide engines (rg looked up once, on first use; compose.py installs them)."""
    from lsp_server.search.engines import SearchEngines

    return ctx.services.get(SearchEngines)


def folder_of(target: Path) -> Path:
    """The folder a search of `target` runs in (displayed paths are relative to it).
    A target that is neither a folder nor a regular file (a FIFO would block the engine
    forever) is refused."""
    if target.is_dir():
        return target
    if target.is_file():
        return target.parent
    if beneath.loops(target):
        raise beneath.link_loop(str(target))
    raise ToolError(
        FS_NOT_A_FILE,
        f"{target} is neither a regular file nor a folder",
        "search a folder or a regular file",
    )


def ignore_base_for(ctx: ToolContext, target: Path) -> Path:
    root = ctx.workspace.root_of(target)
    return root if root is not None else folder_of(target)


async def search(
    ctx: ToolContext,
    target: Path,
    pattern: str,
    *,
    include: str | None = None,
    ignore_case: bool = False,
    mode: OutputMode = "content",
    context: int = 0,
    multiline: bool = False,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> tuple[SearchOutcome, Path]:
    """Run one search; secret files are dropped from the outcome. Returns the outcome and
    the folder its paths are relative to. ripgrep runs from the event loop and its
    result files are checked there as they arrive (short syscalls each); what may walk
    the tree (the names of a hard-linked file) goes to a worker thread."""
    from lsp_server.search.query import SearchQuery
    from lsp_server.search.render import warning_path

    ctx.workspace.require_not_secret(target)
    engines = engines_of(ctx)  # the first call makes them, once
    await require_readable_link(ctx, target)
    for name, value in (("pattern", pattern), ("include", include or "")):
        size = len(value.encode("utf-8", "surrogateescape"))
        if size > MAX_PATTERN_BYTES:  # it goes to rg's argument list, capped at 128 KiB
            raise ToolError(
                INVALID_ARGUMENT,
                f"the {name} is {size} bytes long; grep takes at most {MAX_PATTERN_BYTES}",
                "search for a shorter, distinctive part of the text (or several greps)",
            )
    if "\x00" in pattern or "\x00" in (include or ""):
        # No program argument can hold a NUL: say so instead of failing inside rg's spawn.
        raise ToolError(
            INVALID_ARGUMENT, "the pattern or glob contains a NUL byte", "use \\x00 in the regex"
        )
    base = folder_of(target)
    with ResultScreen(ctx, base, secret_test(ctx, engines, base)) as screen:
        query = SearchQuery(
            pattern,
            target=target,
            ignore_base=ctx.workspace.root_of(target) or base,
            include=include,
            ignore_case=ignore_case,
            mode=mode,
            context=context,
            multiline=multiline,
            timeout_seconds=timeout_seconds,
            excluded=excluded_patterns(ctx),
            on_file=screen.visit,
        )
        outcome = await _run_engine(engines, query, ctx.config.search.engine)
        outcome.files = [hits for hits in outcome.files if not screen.is_secret(hits.path)]
        outcome.warnings = [
            line for line in outcome.warnings if not screen.is_secret(warning_path(line)[0])
        ]
        await screen.leave_out_links(outcome)
    return outcome, base


async def _run_engine(
    engines: SearchEngines, query: SearchQuery, engine: EngineChoice
) -> SearchOutcome:
    """The engine's outcome; its complaints as the tool's errors."""
    from lsp_server.search.query import EngineFailure, InvalidInclude, InvalidPattern

    try:
        return await engines.search(query, engine)
    except InvalidPattern as exc:
        raise ToolError(
            GREP_INVALID_REGEX,
            str(exc),
            "fix the pattern: the syntax is Rust regex (ripgrep); escape ( ) [ ] { } . * + ? "
            "| \\ with a backslash to match them literally",
        ) from exc
    except InvalidInclude as exc:
        raise ToolError(
            INVALID_ARGUMENT,
            f"include: {exc}",
            "fix the glob: balance { } and [ ], or escape them as [{] [}] [[]",
        ) from exc
    except EngineFailure as exc:
        raise ToolError(
            INTERNAL_ERROR, f"the search engine failed: {exc}", "retry, or set search.engine"
        ) from exc


async def require_readable_link(ctx: ToolContext, target: Path) -> None:
    """A single file with more than one name is searched only when read_file would read
    it (fs/hardlinks.py): all its names inside, none a secret. Finding its names
    walks the tree: in a worker thread."""
    try:
        st = os.lstat(target)
    except OSError:
        return  # the engine reports what is missing
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        root = ctx.workspace.root_of(target) or target.parent
        await anyio.to_thread.run_sync(
            hardlinks.require_all_inside, ctx.workspace, root, target, st
        )


def display_prefix(ctx: ToolContext, base: Path) -> str:
    """What goes before a base-relative path to make the workspace display path (one
    Workspace.relative call per search instead of one per file)."""
    return ctx.workspace.relative(base / "x")[:-1]


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    from lsp_server.search.render import render

    target = ctx.paths["path"]
    mode: OutputMode = args.get("output_mode", "content")
    context = args.get("context", 0) if mode == "content" else 0
    timeout = float(args.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS))
    outcome, base = await search(
        ctx,
        target,
        args["pattern"],
        include=args.get("include"),
        ignore_case=args.get("ignore_case", False),
        mode=mode,
        context=context,
        multiline=args.get("multiline", False),
        timeout_seconds=timeout,
    )
    text = render(
        outcome,
        mode=mode,
        max_results=args.get("max_results", ctx.config.search.max_results),
        context=context,
        display=display_prefix(ctx, base).__add__,
        timeout_seconds=timeout,
    )
    if outcome.notes:
        text = "\n".join((text, *outcome.notes))
    return ToolOutput(text, paths=[target])


TOOLS = (Tool(CONTRACT, run),)
