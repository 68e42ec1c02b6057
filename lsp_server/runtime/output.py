"""The output contract: bounded text with a truthful snip, full results kept for paging."""

from __future__ import annotations

import hashlib
import itertools
import logging
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import attrs

from lsp_server.protocol import ResultPage
from lsp_server.runtime import textio
from lsp_server.runtime.errors import INVALID_ARGUMENT, RESULT_NOT_FOUND, ToolError
from lsp_server.runtime.session_names import ref_token

log = logging.getLogger(__name__)

MAX_PAGE_BYTES = 24_576
DEFAULT_PAGE_BYTES = 16_384
# Results larger than this are spilled to the state folder instead of kept in memory.
SPILL_BYTES = 1024 * 1024


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


def spill_name(ref: str) -> str:
    """The file a spilled result is kept in: named by the ref's hash, never by the ref."""
    return hashlib.sha256(ref.encode("utf-8", "surrogatepass")).hexdigest() + ".txt"


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


@attrs.define
class StoredResult:
    ref: str
    size: int
    sha256: str
    data: bytes | None = None
    spill_path: Path | None = None
    number: int = 0
    """Its place in the session's order of refs (oldest first)."""

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        assert self.spill_path is not None
        try:
            return self.spill_path.read_bytes()
        except OSError:  # dropped from the state folder meanwhile (bounds, --fresh)
            raise ToolError(
                RESULT_NOT_FOUND,
                f"stored result {self.ref!r} is no longer in toolhost's state folder",
                "re-run the call that produced it",
            ) from None


class ResultStore:
    """Full texts of bounded results, per session; evicted oldest first.

    `numbers` gives each new ref its number (a CLI session reserves them on disk, so two
    processes never hand out the same ref); texts over `spill_bytes` go to `spill_dir`."""

    def __init__(
        self,
        session_id: str,
        max_results: int,
        spill_dir: Path | None,
        *,
        numbers: Callable[[], int] | None = None,
        spill_bytes: int = SPILL_BYTES,
    ) -> None:
        self._token = ref_token(session_id)
        self._max_results = max_results
        self._spill_dir = spill_dir
        self._spill_bytes = spill_bytes
        self._items: OrderedDict[str, StoredResult] = OrderedDict()
        self._numbers = numbers or itertools.count(1).__next__

    def store(self, text: str) -> str:
        data = text.encode("utf-8", errors="surrogateescape")
        number = self._numbers()
        ref = f"r-{self._token}-{number}"
        item = StoredResult(ref, len(data), hashlib.sha256(data).hexdigest(), number=number)
        if len(data) > self._spill_bytes and self._spill_dir is not None:
            item.spill_path = self._spill_dir / spill_name(ref)
            try:
                textio.atomic_write(item.spill_path, data, mode=0o600)
            except OSError as exc:  # the state folder refuses: page it from memory instead
                log.warning("cannot keep result %s in %s: %s", ref, self._spill_dir, exc)
                item.spill_path = None
        if item.spill_path is None:
            item.data = data
        self.adopt(item)
        return ref

    def adopt(self, item: StoredResult) -> None:
        """Keep `item` as the newest result (a CLI session loads its earlier ones so)."""
        self._items[item.ref] = item
        while len(self._items) > self._max_results:
            _, old = self._items.popitem(last=False)
            if old.spill_path is not None:
                old.spill_path.unlink(missing_ok=True)

    def items(self) -> list[StoredResult]:
        return list(self._items.values())

    def has(self, ref: str) -> bool:
        return ref in self._items

    def page(self, ref: str, offset: int = 0, limit: int = DEFAULT_PAGE_BYTES) -> ResultPage:
        item = self._items.get(ref)
        if item is None:
            raise ToolError(
                RESULT_NOT_FOUND,
                f"no stored result {ref!r} in this session (evicted or never stored)",
                "re-run the call that produced it",
            )
        if offset < 0 or offset > item.size:
            raise ToolError(
                INVALID_ARGUMENT,
                f"offset {offset} is outside 0..{item.size}",
                "pass the nextOffset of the previous page",
            )
        limit = max(1, min(limit, MAX_PAGE_BYTES))
        data = item.read()
        start = offset
        while 0 < start < item.size and (data[start] & 0xC0) == 0x80:
            start -= 1  # never start inside a character
        end = min(start + limit, item.size)
        while start < end < item.size and (data[end] & 0xC0) == 0x80:
            end -= 1  # never end inside a character
        if end == start and end < item.size:
            end = min(item.size, start + 4)  # a limit smaller than one character
        text = data[start:end].decode("utf-8", errors="surrogateescape")
        complete = end >= item.size
        next_offset = None if complete else end
        return ResultPage(ref, start, next_offset, item.size, item.sha256, complete, text)

    def clear(self) -> None:
        for item in self._items.values():
            if item.spill_path is not None:
                item.spill_path.unlink(missing_ok=True)
        self._items.clear()
