"""The walk of a watched root (watcher.py): a watch on each folder of the root's file
system before it is listed (a folder made meanwhile is listed or reported), except `.git`
folders, the inside of nested repositories, the kept-out folders (toolhost's own) and
other mounts; the files' sizes counted on the way when the walk measures the root.

Each watch is taken from the watcher's share (root_budget.py). A first walk that runs out
of its share of inotify watches goes on with fanotify folder marks (`spill`: their own
pool, where the process has no filesystem mark: root_watchers.py), each folder watched so
far marked anew from the list, so that no folder is listed twice.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path

from lsp_server.checkpoints.watching.root_budget import (
    ShareExceeded,
    Tally,
    WatchBudget,
    enters,
    links_among,
)
from lsp_server.fs import fanotify_folders
from lsp_server.fs.fanotify_folders import FanotifyFolders
from lsp_server.fs.inotify import Inotify, InotifyError

log = logging.getLogger(__name__)

_SKIPPED_FOLDER = (2, 13, 20, 40)  # ENOENT, EACCES, ENOTDIR, ELOOP


class TreeWalk:
    def __init__(
        self,
        root: Path,
        kept_out: Sequence[str],
        budget: WatchBudget | None,
        skip: frozenset[str],
        marks: bool,
    ) -> None:
        self.root = root
        self.marks = marks  # fanotify folder marks (fs/fanotify_folders.py), not inotify
        self.kept_out = tuple(kept_out)  # (relative) neither watched nor reported: our own
        self.budget = budget or WatchBudget(1.0)
        self.skip = skip  # watched, not counted by a first walk (regenerable: root_budget.py)
        self.spill: WatchBudget | None = None  # folder marks, for when the share runs out
        self.chosen: str | None = None  # with marks: why not inotify (said once)
        self._root_dev = 0
        self._over_share: str | None = None
        self._gate: threading.Event | None = None  # a walk goes on while it is set
        self._first_walk = False
        self._lock = threading.Lock()
        self._inotify: Inotify | FanotifyFolders | None = None
        self._folders: dict[int, str] = {}  # wd -> folder ("" is the root)
        self._nested: set[str] = set()  # nested repositories: watched, not entered
        self._hard_links: set[str] = set()

    def _spilled(self) -> None:
        """The walk moved to folder marks: what inotify had queued is gone."""

    def _kept_out(self, path: str) -> bool:
        return any(path == k or path.startswith(k + "/") for k in self.kept_out)

    # -- watches ------------------------------------------------------------------------

    def _watch_tree(self, top: str, tally: Tally | None = None) -> None:
        """Watch `top` and every folder below it on the root's file system, each before it
        is listed (a folder made meanwhile is listed or reported); `tally`: count files."""
        pending, files = [(top, True)], []
        root = str(self.root)
        while pending:
            if self._gate is not None:
                self._gate.wait()
            folder, counted = pending.pop()
            full = f"{root.rstrip('/')}/{folder}" if folder else root
            if self._over_share is None:
                self._watch(full, folder, tally is not None)
            try:
                entries = list(os.scandir(full))
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
                    else:
                        st = entry.stat(follow_symlinks=False)
                        if st.st_nlink > 1:
                            self._hard_links.add(prefix + entry.name)
                        if counted:
                            tally.add(st.st_size)
                except OSError:
                    continue
        self._hard_links |= links_among(root.rstrip("/"), files, self._links_found)

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
