"""The walk of a watched root (watcher.py): a watch on each folder of the root's file
system before it is listed (a folder made meanwhile is listed or reported), except `.git`
folders, the inside of nested repositories, the kept-out folders (toolhost's own) and
other mounts; the files' sizes counted on the way when the walk measures the root.

A git root can instead be watched from its index (`_watch_known`): each folder holding a
tracked path is watched without being listed (the index says it exists), and then only the
folders it does not name are walked (`git ls-files --others --directory` names them).

Each watch is taken from the watcher's share (root_budget.py). A first walk that runs out
of its share of inotify watches goes on with fanotify folder marks (`spill`: their own
pool, where the process has no filesystem mark: root_watchers.py), each folder watched so
far marked anew from the list, so that no folder is listed twice.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
import time
import weakref
from collections.abc import Callable, Container, Iterable, Sequence
from pathlib import Path

from lsp_server.checkpoints.watching.changes import Listing
from lsp_server.checkpoints.watching.root_budget import (
    OverBudget,
    ShareExceeded,
    Tally,
    WatchBudget,
    enters,
    links_among,
)
from lsp_server.fs import fanotify_folders
from lsp_server.fs.fanotify_folders import FanotifyFolders
from lsp_server.fs.folder_marker import add_watches_probing
from lsp_server.fs.inotify import Inotify, InotifyError
from lsp_server.fs.shared_listings import SharedListings, root_walk_entries

log = logging.getLogger(__name__)

_SKIPPED_FOLDER = (2, 13, 20, 40)  # ENOENT, EACCES, ENOTDIR, ELOOP
_CLOCK_NS = 2_000_000_000
"""A folder changed within this of a listing may have changed after it, unseen (clock
ticks, FAT's 2 s: shadow/folder_stamps.py's margin)."""
YIELD_SECONDS = 3.0
"""How long, in all, a walk started ahead waits for snapshots (its gate): enough for the
first command's two, so that they have the cores; commands back to back (an agent's test
loop) would otherwise keep it from ever ending, and each of their snapshots would scan."""


def _is_file(mode: int) -> bool:
    """A file git records: a regular file or a link (not a pipe, socket or device)."""
    return stat.S_ISREG(mode) or stat.S_ISLNK(mode)


def _listed_file(entry: os.DirEntry[str]) -> bool:
    """`_is_file` from the folder's listing alone (no stat where it says the type)."""
    return entry.name != ".git" and (entry.is_symlink() or entry.is_file(follow_symlinks=False))


def _readable(path: str, st: os.stat_result) -> bool:
    """Whether this process can read a file (a link's target is not read)."""
    if not stat.S_ISREG(st.st_mode) or st.st_mode & stat.S_IROTH or _EUID == 0:
        return True
    return os.access(path, os.R_OK)


_EUID = os.geteuid()


def _inside(path: str) -> bool:
    """A root-relative path of an index that stays inside the root."""
    return not path.startswith("/") and ".." not in path.split("/")


class TreeWalk:
    def __init__(
        self,
        root: Path,
        kept_out: Sequence[str],
        budget: WatchBudget | None,
        skip: frozenset[str],
        marks: bool,
        listings: SharedListings | None = None,
    ) -> None:
        self.root = root
        self.listings = listings  # shared with the secret-file walk (fs/shared_listings.py)
        self.marks = marks  # fanotify folder marks (fs/fanotify_folders.py), not inotify
        self.kept_out = tuple(kept_out)  # (relative) neither watched nor reported: our own
        self.budget = budget or WatchBudget(1.0)
        self.skip = skip  # watched, not counted by a first walk (regenerable: root_budget.py)
        self.spill: WatchBudget | None = None  # folder marks, for when the share runs out
        self.chosen: str | None = None  # with marks: why not inotify (said once)
        self._root_dev = 0
        self._over_share: str | None = None
        self._gate: threading.Event | None = None  # a walk goes on while it is set
        self._yield_left = YIELD_SECONDS
        self._first_walk = False
        self._lock = threading.Lock()
        self._inotify: Inotify | FanotifyFolders | None = None
        self._folders: dict[int, str] = {}  # wd -> folder ("" is the root)
        self._nested: set[str] = set()  # nested repositories: watched, not entered
        self._hard_links: set[str] = set()
        self._known: dict[str, int] = {}  # watched from the index, unlisted: its ctime then
        self.unavailable: str | None = None  # why not watched (each snapshot: a full scan)
        self._walked: tuple[list[str], list[str]] | None = None
        """What the last walk of the whole root listed, for the next take: its files, and
        those this process cannot read (a walk that counts, and so stats each file, knows)."""
        self._whole = False  # no event of the walk under way was lost (it may be `_walked`)

    def _stop(self) -> None:
        """Stop watching, every watch given back (the watcher's)."""

    def _run(self, walk: Callable[[], None]) -> None:
        """Open the watches' group if need be, then `walk`; on failure the watcher stops
        (`unavailable` says why)."""
        self._over_share = None
        try:
            if self._inotify is None:
                self._root_dev = self.root.stat().st_dev
                self._inotify = FanotifyFolders() if self.marks else Inotify()
                weakref.finalize(self, self._inotify.close)
            self._first_walk = True
            walk()
        except OverBudget:
            self._stop()
            raise
        except (InotifyError, OSError) as exc:
            reason = str(exc) if isinstance(exc, ShareExceeded) else exc.strerror or exc
            self.unavailable = f"the root cannot be watched ({reason})"
            log.warning("checkpoints of %s: %s; every snapshot scans it", self.root, exc)
            self._stop()
            return
        finally:
            self._first_walk = False
        if self._over_share is not None:
            self.unavailable = f"the root is not watched ({self._over_share})"
            self._stop()

    def _spilled(self) -> None:
        """The walk moved to folder marks: what inotify had queued is gone."""

    def _walk_root(self, tally: Tally | None) -> None:
        """Watch the whole root (`_watch_tree`); what the walk listed is kept for the next
        take (`_take_listing`) unless an event was lost meanwhile."""
        self._walked, self._whole = None, True
        with self.listings.root_walk() if self.listings else contextlib.nullcontext():
            self._run(lambda: self._watch_tree("", tally))
        if self._inotify is None or not self._whole:
            self._walked = None

    def _take_listing(self, changed: set[str]) -> Listing | None:
        """What the last whole walk listed, with the paths `changed` since (once)."""
        if self._walked is None:
            return None
        (files, unreadable), self._walked = self._walked, None
        nested = frozenset(self._nested)
        return Listing(tuple(files), frozenset(unreadable), nested, frozenset(changed))

    def _kept_out(self, path: str) -> bool:
        return any(path == k or path.startswith(k + "/") for k in self.kept_out)

    # -- watches ------------------------------------------------------------------------

    def _watch_tree(self, top: str, tally: Tally | None = None) -> None:
        """Watch `top` and every folder below it on the root's file system, each before it
        is listed (a folder made meanwhile is listed or reported); `tally`: count files
        (and, from the root down, keep what was listed: `_walked`)."""
        pending, files = [(top, True)], []
        root = str(self.root)
        listed: list[str] | None = None if top else []
        unreadable: list[str] = []
        listings = self.listings
        while pending:
            self._yield()
            folder, counted = pending.pop()
            full = f"{root.rstrip('/')}/{folder}" if folder else root
            if self._over_share is None and folder not in self._known:
                self._watch(full, folder, tally is not None)
            try:
                # (after its watch: the secret walk's listing is taken only if still current)
                entries = root_walk_entries(listings, full, folder)
            except OSError:
                continue
            if tally is not None:
                tally.check_time()
            if folder and any(entry.name == ".git" for entry in entries):
                self._nested.add(folder)
                continue
            prefix = f"{folder}/" if folder else ""
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        rel = prefix + entry.name
                        if (
                            entry.name != ".git"
                            and not self._kept_out(rel)
                            and enters(self._root_dev, entry.path, entry)
                        ):
                            pending.append((rel, counted and entry.name not in self.skip))
                    elif tally is None:
                        files.append(prefix + entry.name)
                        if listed is not None and _listed_file(entry):
                            listed.append(prefix + entry.name)
                    else:
                        st = entry.stat(follow_symlinks=False)
                        if st.st_nlink > 1:
                            self._hard_links.add(prefix + entry.name)
                        if counted:
                            tally.add(st.st_size)
                        if listed is not None and _is_file(st.st_mode) and entry.name != ".git":
                            listed.append(prefix + entry.name)
                            if not _readable(entry.path, st):
                                unreadable.append(prefix + entry.name)
                except OSError:
                    continue
        self._hard_links |= links_among(root.rstrip("/"), files, self._links_found)
        if listed is not None:
            self._walked = (listed, unreadable)

    def _watch_known(self, folders: Iterable[str], gitlinks: Iterable[str]) -> None:
        """Watch the folders a git index names (`folders`: those holding a tracked path, each
        marked unlisted, its change time noted; one gone since is skipped) and its
        submodules (`gitlinks`: watched, not entered). Folder marks only; a name that
        leaves the root (`..`, absolute: an index a command wrote) is not followed."""
        marks = self._inotify
        if not isinstance(marks, FanotifyFolders):
            raise InotifyError("a watch from the index places folder marks")
        top = str(self.root).rstrip("/")
        known, kept_out = self._known, self.kept_out
        todo = [
            f
            for f in folders
            if f not in known and _inside(f) and not (kept_out and self._kept_out(f))
        ]
        if not self.budget.take(len(todo)):
            raise ShareExceeded(self.budget.refusal())
        self._mark_all(marks, top, todo)
        for link in gitlinks:
            if link not in known and _inside(link) and not self._kept_out(link):
                self._watch(f"{top}/{link}", link, False)
                known[link] = 0
                self._nested.add(link)

    def _mark_all(self, marks: FanotifyFolders, top: str, todo: list[str]) -> None:
        """Folder marks on `todo` (their share taken already; many: by a child process)."""
        watched, known, nested = self._folders, self._known, self._nested
        paths = [f"{top}/{folder}" if folder else top or "/" for folder in todo]
        # (closed on the way out: a child placing them is stopped when one fails)
        with contextlib.closing(add_watches_probing(marks, paths, ".git")) as placed:
            for index, (folder, outcome) in enumerate(zip(todo, placed, strict=True)):
                if isinstance(outcome, InotifyError):
                    self.budget.give()
                    known[folder] = 0
                    if outcome.errno in _SKIPPED_FOLDER:  # gone, not a folder, unreadable
                        continue
                    self.budget.give(len(todo) - index - 1)
                    raise outcome
                wd, repository, known[folder] = outcome
                watched[wd] = folder
                if repository and folder:
                    nested.add(folder)  # a repository inside: as the walk takes it

    def _watch_untracked(
        self, names: Iterable[str], since_ns: int, tracked: tuple[Container[str], ...]
    ) -> list[str]:
        """Walk the folders among `names`, git's untracked names listed from `since_ns` on
        (relative to the root, each at the top of what the index does not hold): the root
        is then watched whole. Returns the names that listing may have missed: made in a
        watched folder before its watch, after git listed it (a folder whose change time
        was then `since_ns` or later, less the clock's margin, is listed again; `tracked`:
        the index's paths and its folders, not new)."""
        top = str(self.root).rstrip("/")
        known = self._known
        missed: list[str] = []
        for folder, changed in known.items():
            if changed >= since_ns - _CLOCK_NS and (folder not in self._nested or not folder):
                missed += self._untracked_in(folder, tracked)
        for name in dict.fromkeys([*names, *missed]):
            if not name or name in known or self._kept_out(name):
                continue
            try:
                st = os.lstat(f"{top}/{name}")
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) and st.st_dev == self._root_dev:
                self._watch_tree(name)
        known.clear()
        return missed

    def _untracked_in(self, folder: str, tracked: tuple[Container[str], ...]) -> list[str]:
        """The names right in `folder` the index does not hold."""
        prefix = f"{folder}/" if folder else ""
        full = f"{str(self.root).rstrip('/')}/{folder}" if folder else str(self.root)
        try:
            with os.scandir(full) as listing:
                names = [prefix + entry.name for entry in listing if entry.name != ".git"]
        except OSError:
            return []
        return [
            name
            for name in names
            if not any(name in each for each in tracked) and not self._kept_out(name)
        ]

    def _gated(self, gate: threading.Event | None) -> None:
        """The walk about to start goes on only while `gate` is set (YIELD_SECONDS in all)."""
        self._gate, self._yield_left = gate, YIELD_SECONDS

    def _yield(self) -> None:
        """Wait while the gate is clear, for YIELD_SECONDS in all; then go on regardless."""
        gate = self._gate
        if gate is None or gate.is_set():
            return
        began = time.monotonic()
        gate.wait(max(self._yield_left, 0.0))
        self._yield_left -= time.monotonic() - began
        if self._yield_left <= 0:
            log.info("the walk of %s goes on beside the snapshots now", self.root)
            self._gate = None

    def _links_found(self, found: set[str]) -> None:
        with self._lock:
            self._hard_links |= found

    def _watch(self, full: str, folder: str, counting: bool) -> None:
        """One folder's watch; over the budget a counting walk goes on without watching."""
        assert self._inotify is not None
        if not self.budget.take():
            if self._spill_to_marks(counting):
                self._watch(full, folder, counting)
                return
            if not counting:
                raise ShareExceeded(self.budget.refusal())
            self._over_share = self.budget.refusal()
            return
        try:
            wd = self._inotify.add_watch(full)
        except InotifyError as exc:
            self.budget.give()
            if exc.errno in _SKIPPED_FOLDER:  # gone, not a folder, unreadable: not walked
                return
            raise
        self._folders[wd] = folder

    def _spill_to_marks(self, counting: bool) -> bool:
        """inotify's share ran out: go on with folder marks, each folder watched so far
        marked anew (none listed again); False where there are none."""
        budget = self.spill
        if budget is None or self.marks or not self._first_walk:
            return False
        self.spill = None  # (tried once)
        if fanotify_folders.available() is not None:
            return False
        marks = FanotifyFolders()  # (raises before anything changed)
        why, watched, group = self.budget.refusal(), list(self._folders.values()), self._inotify
        self.budget.give(len(watched))
        self._inotify, self._folders, self.budget, self.marks = marks, {}, budget, True
        weakref.finalize(self, marks.close)
        if group is not None:
            group.close()  # (what it queued meanwhile: the first take after a walk scans)
        self._whole = False  # (nor can this walk's listing stand for a scan)
        self.chosen = f"watched through fanotify folder marks, not inotify: {why}"
        log.info("checkpoints of %s: %s", self.root, self.chosen)
        self._spilled()
        top = str(self.root).rstrip("/")
        for folder in watched:
            if self._over_share is None:
                self._watch(f"{top}/{folder}" if folder else str(self.root), folder, counting)
        return True

    def _unwatch(self, top: str) -> None:
        assert self._inotify is not None
        prefix = top + "/"
        for wd, folder in list(self._folders.items()):
            if folder == top or folder.startswith(prefix):
                del self._folders[wd]
                self._inotify.remove_watch(wd)
                self.budget.give()
        self._nested = {n for n in self._nested if n != top and not n.startswith(prefix)}
