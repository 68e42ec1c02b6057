"""One watcher per workspace root, started on the root's first snapshot: inotify
(watcher.py) within one budget of watches (root_budget.py); a root inotify cannot watch
(it needs more watches than the share leaves, or none are left) is watched through one
fanotify filesystem mark (fanotify_watch.py) where this process may place one, else
through a fanotify mark per folder (any user, Linux 5.13+: `marked`, within a share of
fs.fanotify.max_user_marks), else not watched (its snapshots go by the folders' stamps)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from lsp_server.checkpoints.watching.changes import Changed
from lsp_server.checkpoints.watching.fanotify_watch import (
    FanotifyWatcher,
    bare_reason,
    may_resolve_handles,
)
from lsp_server.checkpoints.watching.root_budget import WatchBudget
from lsp_server.checkpoints.watching.watcher import TreeWatcher
from lsp_server.config.broad_roots import mounts_inside, own_folders_inside
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.fs import fanotify_folders
from lsp_server.fs.shared_listings import SharedListings
from lsp_server.secrets.file_walk import MAX_DEPTH, SKIPPED_FOLDERS

log = logging.getLogger(__name__)

Watcher = TreeWatcher | FanotifyWatcher


class RootWatchers:
    """One watcher per workspace root, started on its first snapshot."""

    def __init__(
        self,
        enabled: bool = True,
        keep_out: Sequence[Path] = (),
        budget: WatchBudget | None = None,
        skip: Sequence[str] = (),
        marks_budget: WatchBudget | None = None,
    ) -> None:
        self.enabled = enabled
        self.keep_out = tuple(keep_out)
        """toolhost's own folders: not watched where a root holds them."""
        self.budget = budget or WatchBudget(0.1)
        """The process's inotify watches, shared by every root (watch_share)."""
        self.skip = frozenset(skip)
        self.fanotify = True
        """A root inotify cannot watch is watched through fanotify where permitted (tests
        turn it off to see what a user without CAP_SYS_ADMIN gets)."""
        self.listings = SharedListings(MAX_DEPTH, SKIPPED_FOLDERS)
        """The first walks' listings, shared with the secret-file walk (compose.py)."""
        self.marks_budget = marks_budget or WatchBudget.for_marks(0.5)
        """The fanotify folder marks this process may hold (a share of max_user_marks)."""
        self.folder_marks = True
        """Else watched by a fanotify mark per folder where the kernel has them (tests turn
        it off to see what a user of an older kernel gets)."""
        self._marks_refused: str | None = None
        self._no_marks: set[Path] = set()  # roots too big for the marks' share: not tried
        self._watchers: dict[Path, Watcher] = {}
        self.quiet = threading.Event()
        """Set while no snapshot runs: a first walk started ahead waits for it (`scanning`)."""
        self.quiet.set()
        self._scanning = 0
        self._no_fanotify: set[Path] = set()
        self._lock = threading.Lock()
        self.scans: dict[Path, str] = {}
        """How each root's last snapshot was taken: "changed paths" or "full scan: why"."""

    @classmethod
    def for_config(cls, config: CheckpointsConfig, keep_out: Sequence[Path]) -> RootWatchers:
        """Within the config's share of watches; regenerable folders are not measured."""
        return cls(
            True,
            keep_out,
            WatchBudget(config.watch_share),
            config.skip_folders,
            WatchBudget.for_marks(config.mark_share),
        )

    def take(self, root: Path) -> Changed:
        if not self.enabled:
            return Changed(frozenset(), "watching is off")
        first = self.of(root)
        changed = first.take()
        watcher = self.running(root)  # inotify could not start: fanotify from now on
        if watcher is not None and watcher is not first:
            return watcher.take()
        return changed

    @contextlib.contextmanager
    def scanning(self) -> Iterator[None]:
        """A snapshot runs: the cores are its own (a first walk started ahead waits)."""
        with self._lock:
            self._scanning += 1
            self.quiet.clear()
        try:
            yield
        finally:
            with self._lock:
                self._scanning -= 1
                if not self._scanning:
                    self.quiet.set()

    def of(self, root: Path) -> Watcher:
        with self._lock:
            watcher = self._watchers.get(root)
            if watcher is None:
                kept_out = [*own_folders_inside(root, self.keep_out), *mounts_inside(root)]
                watcher = TreeWatcher(
                    root, kept_out, self.budget, self.skip, listings=self.listings
                )
                if self._may_spill(root):  # (else: a filesystem mark, no walk, after it)
                    watcher.spill = self.marks_budget
                self._watchers[root] = watcher
            return watcher

    def _may_spill(self, root: Path) -> bool:
        """A walk of the root whose inotify share runs out may go on with folder marks."""
        no_filesystem_mark = not (self.fanotify and may_resolve_handles())
        usable = self.folder_marks and self._marks_refused is None
        return self.enabled and usable and no_filesystem_mark and root not in self._no_marks

    def marked(self, root: Path, folders: int, why: str) -> TreeWatcher | None:
        """The root's watcher through fanotify folder marks (not started yet, the first
        time), in place of inotify's, which cannot hold its `folders` (`why`); None where
        such marks cannot be placed or their share cannot hold them either."""
        with self._lock:
            return self._marked(root, folders, why)

    def _marked(self, root: Path, folders: int, why: str) -> TreeWatcher | None:
        current = self._watchers.get(root)
        if isinstance(current, TreeWatcher) and current.marks:
            return current
        if not self.enabled or not self.folder_marks or self._marks_refused is not None:
            return None
        if root in self._no_marks or folders > self.marks_budget.left():
            self._no_marks.add(root)  # (a later call, knowing no count, walks it not)
            return None
        self._marks_refused = fanotify_folders.available()
        if self._marks_refused is not None:
            log.info("checkpoints of %s: %s", root, self._marks_refused)
            return None
        kept_out = [*own_folders_inside(root, self.keep_out), *mounts_inside(root)]
        watcher = TreeWatcher(
            root, kept_out, self.marks_budget, self.skip, marks=True, listings=self.listings
        )
        watcher.chosen = f"watched through fanotify folder marks, not inotify: {bare_reason(why)}"
        if current is not None:
            current.close()
        self._watchers[root] = watcher
        log.info("checkpoints of %s: %s", root, watcher.chosen)
        return watcher

    def running(self, root: Path) -> Watcher | None:
        """The root's watcher if one was started (a snapshot was taken), else None; one
        inotify cannot serve is replaced by fanotify's filesystem mark where this process
        may use one, else by fanotify folder marks where the kernel has them."""
        if not self.enabled:
            return None
        with self._lock:
            watcher = self._watchers.get(root)
            if isinstance(watcher, TreeWatcher) and not watcher.marks and watcher.unavailable:
                why = watcher.unavailable
                if self.fanotify and root not in self._no_fanotify:
                    watcher = self._fanotify(root, watcher)
                if isinstance(watcher, TreeWatcher):  # started by the next take (its walk)
                    watcher = self._marked(root, 0, why) or watcher
            return watcher

    def chosen(self, root: Path) -> str | None:
        """How the root is watched when not by inotify (the first result says it)."""
        watcher = self.running(root)
        return None if watcher is None else watcher.chosen

    def watched_by(self, root: Path) -> str | None:
        """ "inotify", or fanotify and why; None: the root is not watched (yet)."""
        watcher = self.running(root)
        if watcher is None or watcher.unavailable is not None:
            return None
        return watcher.chosen or "inotify"

    def _fanotify(self, root: Path, watcher: TreeWatcher) -> Watcher:
        assert watcher.unavailable is not None
        replacement = FanotifyWatcher(root, watcher.kept_out, watcher.unavailable)
        if not replacement.open():
            log.info("checkpoints of %s: %s", root, replacement.unavailable)
            watcher.unavailable += f"; {replacement.unavailable}"
            self._no_fanotify.add(root)
            return watcher
        watcher.close()
        self._watchers[root] = replacement
        log.info("checkpoints of %s: %s", root, replacement.chosen)
        return replacement

    def invalidate(self, root: Path, reason: str) -> None:
        with self._lock:
            watcher = self._watchers.get(root)
        if watcher is not None:
            watcher.invalidate(reason)

    def close(self) -> None:
        with self._lock:
            watchers, self._watchers = list(self._watchers.values()), {}
            self._no_fanotify.clear()
            self._no_marks.clear()
        for watcher in watchers:
            watcher.close()
