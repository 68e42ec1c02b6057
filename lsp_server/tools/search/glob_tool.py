"""glob: files whose path matches a glob, newest modified first (module named so that it
does not shadow the standard library's glob)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.errors import INVALID_ARGUMENT, ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.tools._support.schema_parts import object_schema, string
from lsp_server.tools.search.grep import MAX_PATTERN_BYTES, excluded_patterns

if TYPE_CHECKING:
    pass

MAX_GLOB_RESULTS = 1000
DEFAULT_TIMEOUT_SECONDS = 30.0

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
    from lsp_server.search.render import NO_MATCHES, printable_path, unsearched_note

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
    result = await anyio.to_thread.run_sync(
        partial(
            glob_files,
            base,
            pattern,
            ignore_base=ctx.workspace.root_of(base) or base,
            excluded=excluded_patterns(ctx),
            timeout_seconds=timeout,
        ),
        abandon_on_cancel=True,
    )
    paths = [path for path in result.paths if not ctx.workspace.is_secret(path)]
    rows = [printable_path(ctx.workspace.relative(path)) for path in paths[:MAX_GLOB_RESULTS]]
    if len(paths) > MAX_GLOB_RESULTS:
        rows.append(
            f"[showing the {MAX_GLOB_RESULTS} newest of {len(paths)} matching files; "
            "narrow the pattern]"
        )
    if result.timed_out:
        rows.append(f"[glob timed out after {timeout:g}s: the list is partial]")
    prefix = ctx.workspace.relative(base / "x")[:-1]
    skipped = [
        (path, why) for path, why in result.unreadable if not ctx.workspace.is_secret(base / path)
    ]
    note = unsearched_note(skipped, prefix.__add__)
    return ToolOutput("\n".join([*(rows or [NO_MATCHES]), *([note] if note else [])]), paths=[base])


TOOLS = (Tool(CONTRACT, run),)
