"""read_file: a numbered window of a text file; records this session's observation."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from lsp_server.core.contract import ContractEntry, PathArg, Tool
from lsp_server.core.errors import FS_NOT_FOUND, ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.fs.textio import TextFile
from lsp_server.runtime.context import ToolContext
from lsp_server.runtime.results.bounding import cut_line, head_chars
from lsp_server.tools._support.schema_parts import integer, object_schema, string

CONTRACT = ContractEntry(
    name="read_file",
    core=True,
    read_only=True,
    kind="read",
    description=(
        "Read a text file from the workspace. Returns up to `limit` lines (default 2000) "
        "starting at the 0-based line `offset`, each prefixed with its 1-based line number "
        "and '→'. Reads the editor's unsaved buffer when the file is open there. Any "
        "successful read lets this session edit the file afterwards. A trailer says how to "
        "continue when more lines remain."
    ),
    schema=object_schema(
        {
            "path": string("File path, relative to the workspace root or absolute."),
            "offset": integer("0-based line to start from (default 0).", minimum=0),
            "limit": integer("Maximum number of lines to return (default 2000).", minimum=1),
            "intent": string(
                "Why you read: a hint only, it never changes the result.",
                enum=["inspect", "range", "full"],
            ),
        },
        ["path"],
    ),
    path_args=(PathArg("path", access="read"),),
)


def render_window(
    text_file: TextFile,
    offset: int,
    limit: int,
    max_line_chars: int,
    store: Callable[[str], str] | None = None,
) -> str:
    """Numbered lines; a line over `max_line_chars` shows its head and tail (`store` keeps
    the full lines so that its marker can name where the rest is)."""
    lines = text_file.text.splitlines()
    total = len(lines)
    if total == 0:
        return "(empty file)"
    if offset >= total:
        return f"(offset {offset} is past the end: the file has {total} lines)"
    end = min(total, offset + limit)
    width = max(6, len(str(end)))
    shown, note = cut_long_lines(lines[offset:end], max_line_chars, store)
    rows = list(map(operator.add, line_numbers(offset + 1, end + 1, width), shown))
    if note:
        rows.append(note)
    if end < total or offset > 0:
        rows.append(
            f"[PARTIAL view: lines {offset + 1}-{end} of {total}; pass offset={end} to continue]"
            if end < total
            else f"[PARTIAL view: lines {offset + 1}-{end} of {total}]"
        )
    if text_file.encoding != "utf-8" or text_file.bom:
        rows.append(f"[encoding: {text_file.reported_encoding}]")
    return "\n".join(rows)


# "     N→" for the first lines of a file, made once per width: most reads start there.
_NUMBERS: dict[int, list[str]] = {}
NUMBERS_KEPT = 10_000


def line_numbers(start: int, stop: int, width: int) -> list[str]:
    """The prefixes of lines start..stop-1 (1-based), right-aligned to `width`."""
    form = f"%{width}d→"
    if stop > NUMBERS_KEPT + 1:
        return [form % number for number in range(start, stop)]
    known = _NUMBERS.get(width, [])
    if len(known) < stop - 1:
        # A new list, not an extend: a reader in another thread sees one or the other.
        known = _NUMBERS[width] = [form % n for n in range(1, max(stop, 2001))]
    return known[start - 1 : stop - 1]


def cut_long_lines(
    lines: list[str], max_chars: int, store: Callable[[str], str] | None
) -> tuple[list[str], str | None]:
    """Each line over `max_chars` as its head and tail; with `store`, the lines' full text is
    kept as one result and each marker names the offset of what it left out; the note
    (None when nothing was cut or stored) gives the paging call."""
    if max(map(len, lines), default=0) <= max_chars:
        return lines, None  # nothing to cut (the common case)
    if store is None:
        return [cut_line(line, max_chars) for line in lines], None
    ref = store("\n".join(lines))
    shown: list[str] = []
    offsets: list[int] = []  # where each cut line's left-out part starts in the stored text
    position = 0  # UTF-8 offset of the line in the stored text
    for line in lines:
        how = ""
        if len(line) > max_chars:
            offsets.append(position + _utf8_len(line[: head_chars(max_chars)]))
            how = f"; result_ref {ref}; from offset {offsets[-1]}"
        shown.append(cut_line(line, max_chars, how))
        position += _utf8_len(line) + 1
    offset = str(offsets[0]) if len(offsets) == 1 else "<the offset in the marker>"
    call = (
        '{"id": "session:tool_result", "action": "call", '
        f'"arguments": {{"result_ref": "{ref}", "offset": {offset}}}}}'
    )
    return shown, f"[long lines were cut: page their full text with use_capability {call}]"


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


async def read_observed(ctx: ToolContext, key: str = "path") -> TextFile:
    """Read and observe (shared with the minimal `read` adapter)."""
    path = ctx.paths[key]
    ctx.workspace.require_not_secret(path)
    try:
        text_file = await ctx.files.read_text(path)
    except ToolError as exc:
        if exc.code == FS_NOT_FOUND:
            ctx.files.observe_absent(path)
        raise
    ctx.files.observe(text_file)
    return text_file


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    text_file = await read_observed(ctx)
    text = render_window(
        text_file,
        args.get("offset", 0),
        args.get("limit", ctx.config.limits.read_default_lines),
        ctx.config.limits.max_line_chars,
        ctx.session.results.store,
    )
    return ToolOutput(text)


TOOLS = (Tool(CONTRACT, run),)
