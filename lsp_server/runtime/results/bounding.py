"""The output contract: bounded text with a truthful snip (head and tail kept, the cut
marked with where the rest is), and the note that says how to page the full text back."""

from __future__ import annotations

import attrs

MARKER_ROOM = 300
"""Room kept for the markers a cut text carries (a cut-line marker names a ref and offset)."""


@attrs.frozen
class Bounded:
    text: str
    truncated: bool
    shown_chars: int
    total_chars: int
    omitted_offset: int | None = None
    """UTF-8 byte offset in the full text of the first character left out (for paging)."""


def head_chars(max_chars: int) -> int:
    """How much of a cut line's head `cut_line` shows."""
    return max(int(max_chars * 0.6), 1)


def cut_line(line: str, max_chars: int, how: str = "") -> str:
    """A line over `max_chars` as its head and its tail around a marker; `how` says where
    the rest is (appended inside the marker)."""
    if len(line) <= max_chars:
        return line
    head = head_chars(max_chars)
    tail = max(max_chars - head, 1)
    left = len(line) - head - tail
    return f"{line[:head]} [... {left} chars of this line left out{how} ...] {line[-tail:]}"


def bound_text(text: str, max_chars: int, ref: str | None = None) -> Bounded:
    """Keep the head (~60%) and the tail (~40%), whole lines where they fit; a line cut by
    the bounds still shows its head and its tail. The marker says exactly what is left out
    and, with `ref`, where it starts in the stored full text."""
    total = len(text)
    if total <= max_chars:
        return Bounded(text, False, total, total)
    budget = max(max_chars - MARKER_ROOM, 100)
    start = _head_end(text, int(budget * 0.6))
    end = _tail_start(text, total - (budget - start), start)
    offset = len(text[:start].encode("utf-8", "surrogateescape"))
    marker = _marker(text, start, end, ref, offset)
    shown = text[:start] + marker + text[end:]
    return Bounded(shown, True, len(shown), total, offset)


def _head_end(text: str, limit: int) -> int:
    """Where the head stops: after the last whole line that fits, unless that leaves most of
    the room unused (a long line there is cut instead)."""
    cut = text.rfind("\n", 0, limit) + 1
    return cut if cut >= limit // 2 else limit


def _tail_start(text: str, limit: int, floor: int) -> int:
    """Where the tail starts: at the first whole line within the room, unless that leaves
    most of it unused."""
    limit = max(limit, floor)
    room = len(text) - limit
    found = text.find("\n", limit)
    cut = found + 1 if found != -1 else len(text)
    return cut if len(text) - cut >= room // 2 else limit


def _marker(text: str, start: int, end: int, ref: str | None, offset: int) -> str:
    omitted = end - start
    at_line_start = start == 0 or text[start - 1] == "\n"
    at_line_end = end == len(text) or text[end - 1] == "\n"
    breaks = text.count("\n", start, end)
    where = f"; result_ref {ref}; from offset {offset} (paging call below)" if ref else ""
    if at_line_start and at_line_end:
        return f"[... {breaks} lines ({omitted} chars) omitted{where} ...]\n"
    lead = "" if at_line_start else " "
    trail = "\n" if at_line_end else " "
    number = text.count("\n", 0, start) + 1
    if breaks == 0:  # head and tail of the same line
        length = _line_length(text, start, end)
        cut = f"line {number} cut: {omitted} of its {length} chars left out here"
        return f"{lead}[... {cut}{where} ...]{trail}"
    rest = "" if at_line_start else f"the rest of line {number}, "
    whole = breaks - (0 if at_line_start else 1)
    start_of = "" if at_line_end else f", and the start of line {number + breaks}"
    parts = f"{omitted} chars omitted: {rest}{whole} whole lines{start_of}"
    return f"{lead}[... {parts}{where} ...]{trail}"


def _line_length(text: str, start: int, end: int) -> int:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return (len(text) if line_end == -1 else line_end) - line_start


PAGING_NOTE_CHARS = 400
"""Room kept under the output limit for the paging note (about 300 chars with a long ref)."""


def paging_note(ref: str, total_chars: int, offset: int = 0) -> str:
    """The line under a cut text: where the rest is and the exact call that pages it,
    starting at `offset` (the first byte left out)."""
    call = (
        '{"id": "session:tool_result", "action": "call", '
        f'"arguments": {{"result_ref": "{ref}", "offset": {offset}}}}}'
    )
    start = f"the part left out starts at offset {offset}; " if offset else ""
    return (
        f"\n[cut to fit: the full text ({total_chars} chars) is stored as result_ref {ref}; "
        f"{start}read it page by page with use_capability {call}, then pass each page's "
        "nextOffset as offset (offset 0 is the start)]"
    )
