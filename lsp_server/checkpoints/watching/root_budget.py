"""How big a workspace root is, measured before its first snapshot (blocking).

Shell checkpoints snapshot the whole root, so a root over the budget (files, bytes, or not
measured within the time limit: `checkpoints.max_root_files`, `max_root_mb`,
`measure_seconds`) gets none, said once in a result and in toolhost/status, instead of
hashing gigabytes into the state folder.

What is counted is what a snapshot could record: `.git` folders, toolhost's own folders,
the regenerable folders (`checkpoints.skip_folders`), other file systems (a mount point:
its device differs from the root's), `/proc`, `/sys`, `/dev` and folders that cannot be read
are never walked. The watcher's first walk (watching/watcher.py) counts on the way (`Tally`), so a
watched root is walked once; `measure` walks a root no watcher walks. A git work tree whose
first snapshot is seeded from the user's index is measured from that index instead (its
tracked files and their sizes: shadow/index_summary.py), with no walk at all.

The inotify watches a root may take are bounded too (`WatchBudget`): a share of
fs.inotify.max_user_watches (default 10 %, `checkpoints.watch_share`), which the editor, its
language servers and every other watcher of the user share; one budget per process for
every root's watcher (watching/watcher.py). A root that needs more is watched through fanotify
(one filesystem mark where the process may place it, else a mark per folder within a share
of fs.fanotify.max_user_marks, `checkpoints.mark_share`, a pool no editor draws on), else
not watched, and each of its snapshots scans it instead.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from lsp_server.checkpoints.watching.links_apart import linked_apart
from lsp_server.fs.fanotify_folders import max_user_marks
from lsp_server.fs.inotify import InotifyError
from lsp_server.fs.shared_listings import SharedListings, root_walk_entries
from lsp_server.fs.workspace import NEVER_WALKED
from lsp_server.procs.priority import only_when_idle


class OverBudget(Exception):
    """The root is over the budget (the message says how, for a person)."""


@attrs.define
class Tally:
    """Files and bytes counted so far against the budget."""

    max_files: int
    max_bytes: int
    seconds: float
    deadline: float = attrs.field(init=False)
    files: int = 0
    bytes: int = 0
    measured: bool = False
    """The count is whole: the measure ended within the budget."""

    def __attrs_post_init__(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def add(self, size: int) -> None:
        self.count(1, size)
        if self.files % 512 == 0:
            self.check_time()

    def count(self, files: int, size: int) -> None:
        """`files` files of `size` bytes in all (raises OverBudget once over)."""
        self.files += files
        self.bytes += size
        if self.files > self.max_files:
            raise OverBudget(
                f"it holds more than {self.max_files:,} files (checkpoints.max_root_files)"
            )
        if self.bytes > self.max_bytes:
            raise OverBudget(
                f"it holds more than {self.max_bytes // (1 << 20):,} MB "
                "(checkpoints.max_root_mb, and checkpoints.budget_mb outside git)"
            )

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise OverBudget(
                f"it could not be measured within {self.seconds:g} s "
                f"({self.files:,} files seen; checkpoints.measure_seconds)"
            )


def enters(root_dev: int, full: str, entry: os.DirEntry[str]) -> bool:
    """A folder entry a walk of the root goes into: a real folder on the root's device,
    not one of the system's virtual folders."""
    if full in NEVER_WALKED:
        return False
    try:
        return entry.stat(follow_symlinks=False).st_dev == root_dev
    except OSError:
        return False


def link_count(path: Path) -> int:
    """Hard links of a file (0 for a folder or a missing path): the watcher looks at a file
    with more than one on every snapshot, the walk notes them."""
    try:
        st = path.lstat()
    except OSError:
        return 0
    return 0 if stat.S_ISDIR(st.st_mode) else st.st_nlink


def still_linked(root: Path, known: set[str], changed: set[str]) -> set[str]:
    """The files (relative to `root`) with more than one hard link: of those `known` so,
    and of the `changed` paths."""
    kept = {path for path in known if link_count(root / path) > 1}
    return kept | {path for path in changed if link_count(root / path) > 1}


def linked(root: str, files: Sequence[str]) -> set[str]:
    """The files (relative to `root`) with more than one hard link."""
    found = set()
    for rel in files:
        with contextlib.suppress(OSError):
            if os.lstat(f"{root}/{rel}").st_nlink > 1:
                found.add(rel)
    return found


def links_among(root: str, files: list[str], later: Callable[[set[str]], None]) -> set[str]:
    """The hard-linked among `files` (relative to `root`), if they are few; else none now
    and `later(found)` from a thread of low priority: a walk that counts nothing (measured
    otherwise) waits for no stat of a file, a third of its time on 200,000 files."""
    if len(files) < 1000:
        return linked(root, files)

    def note() -> None:
        only_when_idle()  # below the commands' own work, even git's and rg's (its child too)
        found = linked_apart(root, files)
        later(linked(root, files) if found is None else found)

    threading.Thread(target=note, name="hard links", daemon=True).start()
    return set()


def measure(
    root: Path,
    kept_out: Sequence[str],
    skip: frozenset[str],
    tally: Tally,
    listings: SharedListings | None = None,
) -> Tally:
    """Walk `root` into `tally` (raises OverBudget as soon as it is over); `listings`:
    shared with the secret-file walk."""
    with listings.root_walk() if listings else contextlib.nullcontext():
        return _measure(root, kept_out, skip, tally, listings)


def _measure(
    root: Path,
    kept_out: Sequence[str],
    skip: frozenset[str],
    tally: Tally,
    listings: SharedListings | None,
) -> Tally:
    root_dev = root.stat().st_dev
    pending = [""]
    while pending:
        folder = pending.pop()
        full = f"{root}/{folder}" if folder else str(root)
        try:
            entries = root_walk_entries(listings, full, folder)
        except OSError:
            continue
        tally.check_time()
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if (
                        entry.name != ".git"
                        and entry.name not in skip
                        and rel not in kept_out
                        and enters(root_dev, entry.path, entry)
                    ):
                        pending.append(rel)
                    continue
                size = entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
            tally.add(size)
    return tally


DEFAULT_MAX_USER_WATCHES = 8192


def max_user_watches() -> int:
    """fs.inotify.max_user_watches (a common default when it cannot be read)."""
    try:
        return int(Path("/proc/sys/fs/inotify/max_user_watches").read_text())
    except (OSError, ValueError):
        return DEFAULT_MAX_USER_WATCHES


class WatchBudget:
    """The inotify watches this process may hold: a share of fs.inotify.max_user_watches,
    which the editor, its language servers and every other watcher of the user share
    (`for_marks`: the fanotify folder marks, a share of fs.fanotify.max_user_marks)."""

    def __init__(
        self,
        share: float,
        system_limit: int | None = None,
        pool: str = "inotify watches",
        limit_name: str = "fs.inotify.max_user_watches",
        setting: str = "checkpoints.watch_share",
    ) -> None:
        self.share = share
        self.system_limit = max_user_watches() if system_limit is None else system_limit
        self.limit = int(self.system_limit * share)
        self.used = 0
        self.pool, self.limit_name, self.setting = pool, limit_name, setting
        self._lock = threading.Lock()

    @classmethod
    def for_marks(cls, share: float, system_limit: int | None = None) -> WatchBudget:
        """fanotify folder marks (fs/fanotify_folders.py); none where the pool is unknown."""
        if system_limit is None:
            system_limit = max_user_marks() or 0
        return cls(
            share,
            system_limit,
            "fanotify folder marks",
            "fs.fanotify.max_user_marks",
            "checkpoints.mark_share",
        )

    def left(self) -> int:
        with self._lock:
            return max(0, self.limit - self.used)

    def take(self, count: int = 1) -> bool:
        with self._lock:
            if self.used + count > self.limit:
                return False
            self.used += count
            return True

    def give(self, count: int = 1) -> None:
        with self._lock:
            self.used = max(0, self.used - count)

    def refusal(self) -> str:
        return (
            f"watching it would take more than {self.limit:,} {self.pool} "
            f"({self.share:.0%} of {self.limit_name}, {self.system_limit:,}; {self.setting})"
        )


class ShareExceeded(InotifyError):
    """The root needs more watches than the budget leaves."""
