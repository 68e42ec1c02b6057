"""SharedListings: folder listings that the two walks a server starts with hand each other,
so that the folders both go through are listed once, not twice.

The secret-file walk (secrets/file_walk.py) lists the top levels of each root; the
checkpoint watcher's first walk (checkpoints/watching/tree_walk.py), or the measure of a
root watched otherwise (root_budget.py), lists the whole root. In a home folder the two
met in every folder of those levels. Each now leaves the other what it listed, and each
takes what the other left:
- a root's walk leaves the folders the secret walk will enter (`secret_depth`, none below
  a `secret_skip` name) until that walk has gone through the roots once (`secret_walked`);
- the secret walk leaves the folders it listed whole while a root's walk runs
  (`root_walk`).

A listing is taken only while the folder is as it was listed: its stamp (inode, mtime,
ctime), taken before the listing, is the folder's stamp when the other walk looks, and the
folder's mtime was older than the listing by MARGIN_NS (a name added, removed or renamed
changes the mtime, unless it happens within the file system's clock tick of the listing:
coarse clocks, FAT's 2 s). The watcher looks after its watch is placed, so what it takes
is current as of its watch, as a listing made then would be.

A root's walk that reaches a folder the secret walk is listing now waits for that listing
(they tend to go through a tree in the same order); the secret walk, whose first pass runs
on a call's way, never waits. Each listing left is taken once, by the other walk only,
and held while that walk may come: KEEP_SECONDS at most, MAX_ENTRIES entries in all.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator

import attrs

Stamp = tuple[int, int, int]  # inode, mtime_ns, ctime_ns
MARGIN_NS = 2_000_000_000
MAX_ENTRIES = 20_000
KEEP_SECONDS = 60.0
WAIT_SECONDS = 5.0
"""Longest wait for the other walk's listing of a folder (one listing: milliseconds)."""


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def settled(st: os.stat_result) -> bool:
    """Whether a listing made now of a folder whose stat is `st` can be trusted later on
    its stamp (see the module's docstring)."""
    return time.time_ns() - st.st_mtime_ns >= MARGIN_NS


@attrs.frozen
class _Left:
    stamp: Stamp
    entries: tuple[os.DirEntry[str], ...]
    by_root_walk: bool
    at: float


class SharedListings:
    def __init__(self, secret_depth: int, secret_skip: frozenset[str]) -> None:
        self.secret_depth = secret_depth
        self.secret_skip = secret_skip
        self._secret_pending = True
        self._root_walks = 0
        self._left: dict[str, _Left] = {}
        self._held = 0
        self._now: set[str] = set()  # folders a walk is listing now
        self._changed = threading.Condition()

    # -- who wants what -----------------------------------------------------------------

    def wanted_by_secret_walk(self, depth: int, folder: str) -> bool:
        """Whether a root's walk should leave its listing of `folder` (relative to the
        root, `depth` below it)."""
        return (
            self._secret_pending
            and self._held < MAX_ENTRIES
            and depth <= self.secret_depth
            and not any(name in self.secret_skip for name in folder.split("/"))
        )

    def secret_walked(self) -> None:
        """The secret walk went through the roots once: it wants nothing more."""
        with self._changed:
            self._secret_pending = False
            self._forget(lambda left: left.by_root_walk)

    @property
    def wanted_by_root_walk(self) -> bool:
        """Whether the secret walk should leave what it lists (only its first walk does)."""
        return self._secret_pending and self._root_walks > 0

    @contextlib.contextmanager
    def root_walk(self) -> Iterator[None]:
        """A walk of a whole root (the watcher's, or its measure) runs meanwhile."""
        with self._changed:
            self._root_walks += 1
        try:
            yield
        finally:
            with self._changed:
                self._root_walks -= 1
                if not self._root_walks:
                    self._forget(lambda left: not left.by_root_walk)

    # -- listings -----------------------------------------------------------------------

    def take(
        self, folder: str, stamp: Callable[[], Stamp | None], *, by_root_walk: bool
    ) -> list[os.DirEntry[str]] | None:
        """The listing of `folder` the other walk left, if `stamp()`, called only then, is
        still its stamp; taken once. A root's walk waits while the secret walk lists the
        folder now (a listing within its budget); the secret walk, whose first pass runs
        on a call's way, never waits."""
        with self._changed:
            if by_root_walk and folder in self._now:
                self._changed.wait_for(lambda: folder not in self._now, WAIT_SECONDS)
            left = self._left.get(folder)
            if left is None or left.by_root_walk == by_root_walk:
                return None
            del self._left[folder]
            self._held -= len(left.entries)
        return list(left.entries) if stamp() == left.stamp else None

    @contextlib.contextmanager
    def listing(self, folder: str) -> Iterator[None]:
        """The secret walk lists `folder` now: a root's walk that takes it waits."""
        with self._changed:
            self._now.add(folder)
        try:
            yield
        finally:
            with self._changed:
                self._now.discard(folder)
                self._changed.notify_all()

    def leave(
        self,
        folder: str,
        st: os.stat_result,
        entries: list[os.DirEntry[str]],
        *,
        by_root_walk: bool,
    ) -> None:
        """Leave the listing of `folder` made just now, `st` its stat from before it, for
        the other walk (if it can be trusted and there is room)."""
        if not settled(st):
            return
        now = time.monotonic()
        with self._changed:
            self._expire(now)
            if self._held + len(entries) > MAX_ENTRIES or folder in self._left:
                return
            self._left[folder] = _Left(stamp_of(st), tuple(entries), by_root_walk, now)
            self._held += len(entries)

    def entries(self, folder: str, leave: bool) -> list[os.DirEntry[str]]:
        """The entries of `folder` for a root's walk: the secret walk's listing if still
        current, else listed now (and left for it, if `leave`). Raises OSError as
        os.scandir does."""
        if not (leave or folder in self._left or folder in self._now):  # (no lock taken)
            return list(os.scandir(folder))
        taken = self.take(folder, lambda: _stamp_now(folder), by_root_walk=True)
        if taken is not None:
            return taken
        if not leave:
            return list(os.scandir(folder))
        st = os.stat(folder, follow_symlinks=False)  # noqa: PTH116 (a str, no link followed)
        listed = list(os.scandir(folder))  # (unmarked: the secret walk waits for no listing)
        self.leave(folder, st, listed, by_root_walk=True)
        return listed

    def _expire(self, now: float) -> None:
        """Forget the listings left more than KEEP_SECONDS ago (the first ones: a dict
        keeps the order they were left in)."""
        while self._left:
            folder, left = next(iter(self._left.items()))
            if now - left.at <= KEEP_SECONDS:
                return
            self._held -= len(left.entries)
            del self._left[folder]

    def _forget(self, old: Callable[[_Left], bool]) -> None:
        for folder in [folder for folder, left in self._left.items() if old(left)]:
            self._held -= len(self._left.pop(folder).entries)


def root_walk_entries(
    listings: SharedListings | None, full: str, folder: str
) -> list[os.DirEntry[str]]:
    """The entries of a folder a walk of a whole root lists (`folder` relative to the
    root), through `listings` if any. Raises OSError as os.scandir does."""
    if listings is None:
        return list(os.scandir(full))
    depth = folder.count("/") + 1 if folder else 0
    return listings.entries(full, leave=listings.wanted_by_secret_walk(depth, folder))


def _stamp_now(folder: str) -> Stamp | None:
    try:
        return stamp_of(os.stat(folder, follow_symlinks=False))  # noqa: PTH116
    except OSError:
        return None
