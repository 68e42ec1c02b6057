"""Placeholders: how the sandbox keeps a protected name that does not exist uncreatable.

bubblewrap 0.8 can only make an existing name read-only (`--ro-bind`); for a missing one
it would create the mount point in the real workspace itself, and leave it there. So
toolhost creates the mount point first: an empty file (or an empty folder: an empty `.git`
folder, unlike a file, lets git find an enclosing repository) that the command sees
read-only, so `echo x > .envrc`, `git init` or `mkdir .vscode` fail inside, while every
other name stays writable. It is removed after the last command that uses it.

Commands run at once, from this server and from others on the same folder (an editor's
and an agent's), so who may remove it is decided by the file system, not by a counter in
one process: every command in flight holds a shared `flock` on each placeholder (on each
protected name it binds, to be exact), and a command that ends removes one only when it
gets the exclusive lock (nobody else is using it), the name is still the inode it locked,
still empty and still carries the mark (mtime 1970-01-01T00:00:42, set by toolhost, and
changed by anyone who writes into it). A command that starts while another removes the
placeholder sees, after its lock, that the name is no longer its inode and starts over.
A placeholder left by a server that was killed is adopted and removed by the next command.
Removing a placeholder that another command still uses would detach that command's
read-only mount (the kernel drops mounts on an unlinked name), hence the locks.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from lsp_server.sandbox.protected import Placeholder

# An even whole second: every file system keeps it exactly (FAT has 2-second mtimes).
MARK_NS = 42 * 1_000_000_000
_ATTEMPTS = 20  # 1 ms apart: a remover holds its lock for microseconds
_PAUSE_SECONDS = 0.001
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO put under a protected name must not hang the server.
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@attrs.frozen
class Target:
    """A protected name to hold: `name` in the folder `parent` (a real path)."""

    parent: Path
    name: str
    kind: Placeholder

    @property
    def path(self) -> Path:
        return self.parent / self.name


@attrs.frozen
class _Lock:
    path: Path
    parent_fd: int
    """The folder it is in (shared by the command's locks in that folder)."""
    fd: int
    name: str


@attrs.frozen
class _Held:
    locks: list[_Lock]
    folders: list[int]
    """Descriptors of the folders the locks are in, closed after them."""


@attrs.frozen
class Holding:
    """What one command holds."""

    held: list[Path]
    """Protected paths held (locked, and created when missing): bind them read-only."""
    frozen: list[Path]
    """Folders where a missing name could not be created or the folder not opened: bind
    them read-only as a whole (nothing can be created at their top)."""


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _try_shared(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _create(parent_fd: int, name: str, kind: Placeholder) -> int | None:
    """A new, locked, marked placeholder; None when the name appeared meanwhile."""
    try:
        if kind == "folder":
            os.mkdir(name, 0o755, dir_fd=parent_fd)
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        else:
            fd = os.open(name, _OPEN_FLAGS | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=parent_fd)
    except FileExistsError:
        return None
    for _ in range(_ATTEMPTS):  # a remover may hold it for a moment (it will not remove it)
        if _try_shared(fd):
            # Marked only once locked: nobody removes what is not marked.
            os.utime(fd, ns=(MARK_NS, MARK_NS))
            return fd
        time.sleep(_PAUSE_SECONDS)
    os.close(fd)
    return None


def _lock_existing(parent_fd: int, name: str, seen: os.stat_result) -> int | None:
    """A shared lock on the existing `name` (still the inode `seen`); None: try again."""
    directory = stat.S_ISDIR(seen.st_mode)
    try:
        fd = os.open(name, _DIR_FLAGS if directory else _OPEN_FLAGS, dir_fd=parent_fd)
    except OSError:
        return None
    try:
        if _try_shared(fd):
            now = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
            if _same(now, os.fstat(fd)):
                return fd
    except OSError:
        pass
    os.close(fd)
    return None


class CannotCreate(Exception):
    """A missing name that toolhost may not create in its folder (no write permission):
    the command could give itself the permission back (`chmod u+w .`), so the folder is
    bound read-only for it instead."""


def _hold(parent_fd: int, target: Target) -> int | None:
    """A shared lock on `target`, created as a placeholder when missing. None: it is not a
    plain file or folder (a symlink ...), or stayed contested: it is bound as it is, if it
    exists. Raises CannotCreate."""
    for _ in range(_ATTEMPTS):
        try:
            seen = os.stat(target.name, dir_fd=parent_fd, follow_symlinks=False)
        except FileNotFoundError:
            try:
                fd = _create(parent_fd, target.name, target.kind)
            except PermissionError as exc:
                raise CannotCreate(str(exc)) from exc
            except OSError:
                return None  # a read-only file system: the command cannot create it either
            if fd is not None:
                return fd
            continue
        except OSError:
            return None
        if not (stat.S_ISREG(seen.st_mode) or stat.S_ISDIR(seen.st_mode)):
            return None
        fd = _lock_existing(parent_fd, target.name, seen)
        if fd is not None:
            return fd
        time.sleep(_PAUSE_SECONDS)
    return None


def _release(lock: _Lock) -> None:
    """Drop the lock; remove the placeholder when this was its last user."""
    try:
        fcntl.flock(lock.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        mine = os.fstat(lock.fd)
        now = os.stat(lock.name, dir_fd=lock.parent_fd, follow_symlinks=False)
        if _same(mine, now) and mine.st_mtime_ns == MARK_NS:
            if stat.S_ISDIR(mine.st_mode):
                os.rmdir(lock.name, dir_fd=lock.parent_fd)  # refuses a folder with anything in it
            elif mine.st_size == 0:
                os.unlink(lock.name, dir_fd=lock.parent_fd)
    except OSError:
        pass  # still in use (BlockingIOError), gone already, or not ours to remove
    finally:
        os.close(lock.fd)


class PlaceholderHolds:
    """The locks of each command in flight, by its state folder (one per command)."""

    def __init__(self) -> None:
        self._held: dict[Path, list[_Held]] = {}
        self._mutex = threading.Lock()

    def take(self, key: Path, targets: Sequence[Target]) -> Holding:
        """Hold every target for the command `key` (until `release(key)`)."""
        held = _Held([], [])
        frozen: list[Path] = []
        parents: dict[Path, int] = {}
        try:
            for target in targets:
                if target.parent in frozen:
                    continue
                parent_fd = parents.get(target.parent)
                if parent_fd is None:
                    try:
                        parent_fd = os.open(target.parent, _DIR_FLAGS)
                    except FileNotFoundError:
                        continue
                    except OSError:
                        frozen.append(target.parent)
                        continue
                    parents[target.parent] = parent_fd
                    held.folders.append(parent_fd)
                try:
                    fd = _hold(parent_fd, target)
                except CannotCreate:
                    frozen.append(target.parent)
                    continue
                if fd is not None:
                    held.locks.append(_Lock(target.path, parent_fd, fd, target.name))
        except BaseException:
            self._drop([held])
            raise
        with self._mutex:
            self._held.setdefault(key, []).append(held)
        return Holding([lock.path for lock in held.locks], frozen)

    def release(self, key: Path) -> None:
        """The command `key` ended: drop its locks, removing placeholders nobody uses."""
        with self._mutex:
            held = self._held.pop(key, [])
        self._drop(held)

    def in_flight(self) -> int:
        with self._mutex:
            return len(self._held)

    @staticmethod
    def _drop(held: Sequence[_Held]) -> None:
        for each in held:
            try:
                for lock in each.locks:
                    _release(lock)
            finally:
                for folder in each.folders:
                    with contextlib.suppress(OSError):
                        os.close(folder)


def is_placeholder(path: Path) -> bool:
    """An empty entry carrying toolhost's mark (for doctor and tests)."""
    try:
        seen = path.lstat()
    except OSError:
        return False
    if seen.st_mtime_ns != MARK_NS:
        return False
    if stat.S_ISDIR(seen.st_mode):
        try:
            with os.scandir(path) as entries:
                return next(entries, None) is None
        except OSError as exc:
            return exc.errno == errno.EACCES
    return stat.S_ISREG(seen.st_mode) and seen.st_size == 0
