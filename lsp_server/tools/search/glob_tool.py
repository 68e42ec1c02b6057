"""glob: files whose path matches a glob, newest modified first (module named so that it
does not shadow the standard library's glob)."""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio

from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.errors import INVALID_ARGUMENT, ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.schema_parts import object_schema, string
from lsp_server.tools.search.glob_memory import GlobMemory
from lsp_server.tools.search.grep import MAX_PATTERN_BYTES, engines_of, excluded_patterns
from lsp_server.tools.search.result_screen import secret_test

MAX_GLOB_RESULTS = 1000
DEFAULT_TIMEOUT_SECONDS = 30.0
# Matches beyond the shown ones that the engine sorts too, so that a secret the deny
# list did not cover can be dropped from the page without leaving it short.
_SPARE = 64

CONTRACT = ContractEntry(
    name="glob",
    read_only=True,
    kind="read",
    description=(
        "Find files by path pattern, newest modified first: `**` crosses folders, `{a,b}` "
        'expands, `*` stays inside one folder (e.g. "**/*.py", "src/**/*.{ts,tsx}"). '
        "Respects .gitignore; hidden names match only when the pattern spells the dot; "
        f"secret files are never listed. At most {MAX_GLOB_RESULTS} paths."
    ),
    schema=object_schema(
        {
            "pattern": string("The glob, relative to path.", minLength=1),
            "path": string("Folder to search in (default: the workspace root)."),
            "timeout_seconds": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 300,
                "description": "Stop after this long and list what was found (default 30).",
            },
        },
        ["pattern"],
    ),
    path_args=(PathArg("path", access="read", default="."),),
)


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    from lsp_server.search.listing import glob_files
    from lsp_server.search.render import NO_MATCHES, printable_path, stopped_note, unsearched_note

    base = ctx.paths["path"]
    ctx.workspace.require_not_secret(base)
    pattern: str = args["pattern"]
    if not await anyio.Path(base).is_dir():
        raise ToolError(
            INVALID_ARGUMENT,
            f"{ctx.workspace.relative(base)} is not a folder",
            "pass a folder as path",
        )
    size = len(pattern.encode("utf-8", "surrogateescape"))
    if size > MAX_PATTERN_BYTES:  # compiling a 1 MB glob took 15 s, whatever the timeout
        raise ToolError(
            INVALID_ARGUMENT,
            f"the pattern is {size} bytes long; glob takes at most {MAX_PATTERN_BYTES}",
            "use a shorter glob (e.g. **/*.py), or several",
        )
    if pattern.startswith("/") or ".." in pattern.split("/"):
        raise ToolError(
            INVALID_ARGUMENT,
            f"the pattern {pattern!r} must be relative to path and stay below it",
            "pass the folder as path and a relative pattern such as **/*.py",
        )
    timeout = float(args.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS))
    excluded = excluded_patterns(ctx)
    engines = engines_of(ctx)
    is_secret = ctx.workspace.is_secret
    glob = partial(
        glob_files,
        base,
        pattern,
        ignore_base=ctx.workspace.root_of(base) or base,
        excluded=excluded,
        timeout_seconds=timeout,
        rg=None if ctx.config.search.engine == "python" else engines.rg,
        limit=MAX_GLOB_RESULTS + _SPARE,
        # The deny list went to the engine; without one, every match is checked.
        keep=None if excluded else (lambda path: not is_secret(path)),
        deny=engines.deny_test_for(excluded) if excluded else None,
    )
    try:
        memory = ctx.services.get(GlobMemory)
    except LookupError:  # a runtime composed without one: nothing is kept
        memory = GlobMemory()
    result = await anyio.to_thread.run_sync(
        partial(memory.listed, ctx, base, pattern, glob), abandon_on_cancel=True
    )
    # The shown paths checked again, by the deny list compiled once (is_secret itself costs
    # ~0.3 ms a path: a third of a second for a full page).
    secret = secret_test(ctx, engines, base)
    shown = result.relative
    kept = [rel for rel in shown if not secret(rel)]
    total = result.count - (len(shown) - len(kept))
    prefix = ctx.workspace.relative(base / "x")[:-1]
    rows = [printable_path(prefix + rel) for rel in kept[:MAX_GLOB_RESULTS]]
    if total > MAX_GLOB_RESULTS:
        rows.append(
            f"[showing the {MAX_GLOB_RESULTS} newest of {total} matching files; narrow the pattern]"
        )
    skipped = [
        (path, why) for path, why in result.unreadable if not ctx.workspace.is_secret(base / path)
    ]
    note = unsearched_note(skipped, prefix.__add__)
    if result.timed_out:
        rows.append(stopped_note(timeout, "the files found so far; narrow the path or pattern"))
    elif not rows:
        rows = [NO_MATCHES]
    return ToolOutput("\n".join([*rows, *([note] if note else [])]), paths=[base])


TOOLS = (Tool(CONTRACT, run),)
