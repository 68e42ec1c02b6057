"""Decoded file texts for the lsp_* tools, reused while the file's stat is unchanged.

Each call needs the queried file's text (to sync it) and the lines of every file in the
answer (to show the source line). Reading them through a worker thread each time costs
more than the language server's answer itself; a stat (one cheap syscall) tells whether
the text read last time is still the file's content. Editor buffers are not cached here:
the caller asks the buffer source first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path

StatKey = tuple[int, int, int, int, int]

MAX_CACHED_FILES = 256


def stat_key(path: Path) -> StatKey | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class TextCache:
    def __init__(self, limit: int = MAX_CACHED_FILES) -> None:
        self._limit = limit
        self._entries: OrderedDict[Path, tuple[StatKey, str]] = OrderedDict()

    async def text(self, path: Path, read: Callable[[Path], Awaitable[str]]) -> str:
        """The file's text: cached while its stat matches, else `read(path)`."""
        key = stat_key(path)
        entry = self._entries.get(path)
        if key is not None and entry is not None and entry[0] == key:
            self._entries.move_to_end(path)
            return entry[1]
        text = await read(path)
        # Stat again: a write during the read must not pin a stale text to the new stat.
        if key is not None and stat_key(path) == key:
            self._entries[path] = (key, text)
            self._entries.move_to_end(path)
            while len(self._entries) > self._limit:
                self._entries.popitem(last=False)
        return text
