"""A file of toolhost's own replaced whole: written beside it and renamed over it, so a
reader sees the old bytes or the new ones, never a part (checkpoint records ...)."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> None:
    """A new file beside `path` renamed over it. Created exclusively, never truncated: on
    ext4 a truncated file renamed over another is flushed at once (auto_da_alloc), which
    made a checkpoint's record cost 7x more here."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    try:
        fd = os.open(temp, flags, 0o644)
    except FileExistsError:  # left by a dead process of the same pid
        temp.unlink()
        fd = os.open(temp, flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    temp.replace(path)
