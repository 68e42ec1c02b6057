"""One watcher (watcher.py) per workspace root, started on the root's first snapshot, all
within one budget of inotify watches (root_budget.py)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from lsp_server.checkpoints.root_budget import WatchBudget
from lsp_server.checkpoints.watcher import Changed, TreeWatcher
from lsp_server.config.broad_roots import mounts_inside, own_folders_inside
from lsp_server.config.tree import CheckpointsConfig


class RootWatchers:
    """One watcher per workspace root, started on its first snapshot."""

    def __init__(
        self,
        enabled: bool = True,
        keep_out: Sequence[Path] = (),
        budget: WatchBudget | None = None,
        skip: Sequence[str] = (),
    ) -> None:
        self.enabled = enabled
        self.keep_out = tuple(keep_out)
        """toolhost's own folders: not watched where a root holds them."""
        self.budget = budget or WatchBudget(0.1)
        """The process's inotify watches, shared by every root (watch_share)."""
        self.skip = frozenset(skip)
        self._watchers: dict[Path, TreeWatcher] = {}
        self._lock = threading.Lock()
        self.scans: dict[Path, str] = {}
        """How each root's last snapshot was taken: "changed paths" or "full scan: why"."""

    @classmethod
    def for_config(cls, config: CheckpointsConfig, keep_out: Sequence[Path]) -> RootWatchers:
        """Within the config's share of watches; regenerable folders are not measured."""
        return cls(True, keep_out, WatchBudget(config.watch_share), config.skip_folders)

    def take(self, root: Path) -> Changed:
        if not self.enabled:
            return Changed(frozenset(), "watching is off")
        return self.of(root).take()

    def of(self, root: Path) -> TreeWatcher:
        with self._lock:
            watcher = self._watchers.get(root)
            if watcher is None:
                kept_out = [*own_folders_inside(root, self.keep_out), *mounts_inside(root)]
                watcher = TreeWatcher(root, kept_out, self.budget, self.skip)
                self._watchers[root] = watcher
            return watcher

    def running(self, root: Path) -> TreeWatcher | None:
        """The root's watcher if one was started (a snapshot was taken), else None."""
        if not self.enabled:
            return None
        with self._lock:
            return self._watchers.get(root)

    def invalidate(self, root: Path, reason: str) -> None:
        with self._lock:
            watcher = self._watchers.get(root)
        if watcher is not None:
            watcher.invalidate(reason)

    def close(self) -> None:
        with self._lock:
            watchers, self._watchers = list(self._watchers.values()), {}
        for watcher in watchers:
            watcher.close()
