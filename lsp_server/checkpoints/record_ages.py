"""When each checkpoint ended, as trimming asks it (records.py's `trim`, after each batch of
writers): a record file is parsed the first time it is asked about and again only once it
changed (another inode, size or mtime: record files are written whole, by rename), not at
every trim. Only the oldest files are asked about, so little is held.

A file that cannot be read gives no times: its checkpoints count as old."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

RecordFiles = list[tuple[int, int, str]]
"""(first seq, last seq, name) of each record file of a folder, oldest first."""


def plain_records(path: Path) -> list[dict[str, Any]]:
    """The records of a record file as plain JSON (trimming needs only seq and ended);
    unreadable ones are left out."""
    found = []
    with contextlib.suppress(OSError):
        data = path.read_bytes()
        for line in data.splitlines() if path.suffix == ".jsonl" else [data]:
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and isinstance(record.get("seq"), int):
                    found.append(record)
    return found


class RecordAges:
    """The end times read so far, by record file name (one per store; trims run in threads)."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[tuple[int, int, int], dict[int, float]]] = {}
        self._lock = threading.Lock()

    def ended(self, folder: Path, files: RecordFiles) -> Callable[[int], float]:
        """seq -> when that checkpoint ended (0.0 when no file of `folder` listed in `files`
        holds it readably). What is kept of files no longer listed is forgotten."""
        with self._lock:
            listed = {name for _, _, name in files}
            for name in [name for name in self._known if name not in listed]:
                del self._known[name]

        def ended(seq: int) -> float:
            for first, last, name in files:
                if first <= seq <= last:
                    return self._times(folder / name).get(seq, 0.0)
            return 0.0

        return ended

    def _times(self, path: Path) -> dict[int, float]:
        try:
            seen = path.stat()
        except OSError:
            return {}
        stamp = (seen.st_ino, seen.st_size, seen.st_mtime_ns)
        with self._lock:
            known = self._known.get(path.name)
        if known is not None and known[0] == stamp:
            return known[1]
        times = {int(r["seq"]): float(r["ended"]) for r in plain_records(path)}
        with self._lock:
            self._known[path.name] = (stamp, times)
        return times
