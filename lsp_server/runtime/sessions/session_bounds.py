"""The bounds of the CLI's kept sessions (runtime/sessions/session_files.py): per workspace root, in
bytes over all roots, and in age. Checked after every save; the least recently used session
goes first, never the one just saved, never one another process holds locked."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import attrs

RECORD = "session.json"
LOCK = "lock"
FOLDER_BYTES = 4096
"""What a folder is counted as (its own block) in a session's size."""
UNLISTED_GRACE_SECONDS = 600.0
"""A file in a session folder that its record does not list (a concurrent process's result
not yet listed, or what a killed write left) stays this long before it is removed."""


@attrs.frozen
class SessionBounds:
    per_root: int = 16
    """Sessions kept per workspace root."""
    total_bytes: int = 64 * 1024 * 1024
    """All kept sessions together on disk, stored results included."""
    max_age_days: float = 14.0
    """A session not used for this long is dropped."""


@attrs.frozen
class KeptSession:
    folder: Path
    used: float
    """When it was last saved (its record's mtime; the folder's when it has none)."""
    size: int


def prune(base: Path, bounds: SessionBounds, keep: Path, now: float | None = None) -> list[Path]:
    """Drop sessions over the bounds, oldest first; returns the folders dropped."""
    now = time.time() if now is None else now
    sessions = sorted(kept_sessions(base), key=lambda s: s.used, reverse=True)  # newest first
    doomed: list[KeptSession] = []
    per_root: dict[Path, int] = {}
    survivors: list[KeptSession] = []
    for session in sessions:
        count = per_root.get(session.folder.parent, 0)
        too_old = now - session.used > bounds.max_age_days * 86_400
        if session.folder != keep and (too_old or count >= bounds.per_root):
            doomed.append(session)
            continue
        per_root[session.folder.parent] = count + 1
        survivors.append(session)
    total = sum(session.size for session in survivors)
    for session in reversed(survivors):  # oldest first
        if total <= bounds.total_bytes:
            break
        if session.folder != keep:
            doomed.append(session)
            total -= session.size
    dropped = [session.folder for session in doomed if _remove_unless_in_use(session.folder)]
    _remove_empty_roots(base)
    return dropped


def kept_sessions(base: Path) -> list[KeptSession]:
    found = []
    for root in _folders(base):
        for folder in _folders(root):
            with contextlib.suppress(OSError):
                found.append(KeptSession(folder, _last_used(folder), _size(folder)))
    return found


def _folders(parent: Path) -> Iterator[Path]:
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            yield entry


def _last_used(folder: Path) -> float:
    try:
        return (folder / RECORD).stat().st_mtime
    except FileNotFoundError:
        return folder.stat().st_mtime


def _size(folder: Path) -> int:
    """Disk use, not content length: many tiny sessions cost blocks and folders too."""
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        total += FOLDER_BYTES
        for name in files:
            with contextlib.suppress(OSError):
                st = (Path(dirpath) / name).lstat()
                total += max(st.st_size, st.st_blocks * 512)
    return total


def _remove_unless_in_use(folder: Path) -> bool:
    """Remove a session folder unless another process holds its lock right now."""
    try:
        fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    try:
        shutil.rmtree(folder, ignore_errors=True)
    finally:
        os.close(fd)
    return not folder.exists()


def _remove_empty_roots(base: Path) -> None:
    for root in _folders(base):
        with contextlib.suppress(OSError):
            root.rmdir()  # only succeeds when empty
