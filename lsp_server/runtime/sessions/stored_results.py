"""A session's stored results: the full text of every bounded result, kept (in memory, or
spilled to the state folder when large) so the model can page it back by its ref."""

from __future__ import annotations

import hashlib
import itertools
import logging
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import attrs

from lsp_server.core.errors import INVALID_ARGUMENT, RESULT_NOT_FOUND, ToolError
from lsp_server.fs import textio
from lsp_server.protocol import ResultPage
from lsp_server.runtime.sessions.session_names import ref_token

log = logging.getLogger(__name__)

MAX_PAGE_BYTES = 24_576
DEFAULT_PAGE_BYTES = 16_384
# Results larger than this are spilled to the state folder instead of kept in memory.
SPILL_BYTES = 1024 * 1024


def spill_name(ref: str) -> str:
    """The file a spilled result is kept in: named by the ref's hash, never by the ref."""
    return hashlib.sha256(ref.encode("utf-8", "surrogatepass")).hexdigest() + ".txt"


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
