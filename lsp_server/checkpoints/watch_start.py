"""How a root's watcher starts (watching/), at the server's start where it can: a git
root whose tracked folders need more inotify watches than are left is watched through
fanotify folder marks. Where its first snapshot will be seeded from the user's index, the
folders that index names are marked at start, unlisted, and that snapshot completes the
watch (`IndexCompletion`, shadow/scans.py); else (a restarted server) a walk places the
marks, yielding to the snapshots; and where no watcher can run, the folders are stamped
against the index at start instead (scans.prepare).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from lsp_server.checkpoints.shadow import scans
from lsp_server.checkpoints.shadow.index_summary import IndexSummary
from lsp_server.checkpoints.shadow.isolated_git import ShadowError
from lsp_server.checkpoints.shadow.repository import ShadowRepo
from lsp_server.checkpoints.shadow.seed import (
    index_key,
    lighten_summary,
    user_git_dir,
    user_index_summary,
)
from lsp_server.checkpoints.watching.fanotify_watch import may_resolve_handles
from lsp_server.checkpoints.watching.root_watchers import RootWatchers
from lsp_server.checkpoints.watching.watcher import TreeWatcher
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.procs.priority import lower_priority

log = logging.getLogger(__name__)

_placing: set[int] = set()  # the threads placing the watches a first command waits for


def placing_watches() -> bool:
    """Watches a first snapshot waits for are being placed (the MCP face's background
    import of its SDK waits meanwhile: both would share the GIL)."""
    return bool(_placing)


class WatchStart:
    """The watchers' start for CommandSnapshots (`preparing`: its roots' preparations,
    set once a first snapshot may go on)."""

    def __init__(
        self,
        repo: Callable[[Path], ShadowRepo],
        config: CheckpointsConfig,
        watchers: RootWatchers,
        preparing: dict[Path, threading.Event],
        stamping: Callable[[], bool],
    ) -> None:
        self._repo = repo
        self._config = config
        self.watchers = watchers
        self._preparing = preparing
        self._stamping = stamping

    def prepare_in_background(self, roots: Iterable[Path]) -> None:
        """At start, in threads: read each git root's index and, where no inotify watcher
        is likely to run, mark the folders it names (`mark_known`), or walk the root
        placing folder marks (nothing waits for that walk), else stamp its folders against
        the index (scans.prepare; the first snapshot waits for the index, then finishes the
        walk beside `git add -u`)."""
        for root in roots:
            ready = self._preparing[root] = threading.Event()
            threading.Thread(target=self._prepare, args=(root, ready), daemon=True).start()

    def _prepare(self, root: Path, ready: threading.Event) -> None:
        # (A stamping walk at normal priority: it is the first command's own work, early.)
        me = threading.get_ident()
        _placing.add(me)  # (until the marks a first snapshot waits for are placed)
        try:
            user = user_git_dir(root)
            if user is None:
                return
            key = index_key(user / "index")
            summary = user_index_summary(user, whole=True)  # a walk needs every tracked path
            if summary is None or key is None or index_key(user / "index") != key:
                return
            if summary.files > self._config.max_root_files or not self.unwatchable(summary):
                return  # a watcher will run: the first snapshot needs no stamps
            repo = self._repo(root)
            seeding = self._config.seed_from_git and not repo.index.exists()
            if seeding and self.mark_known(root, summary, ready):
                return  # (the first snapshot, seeded, completes this watch)
            _placing.discard(me)  # (no snapshot waits for the walk below)
            if self.watch_by_marks(root, summary.folders, ready) or ready.is_set():
                return  # (the first snapshot scans: a command may have come meanwhile)
            if not repo.index.exists():
                repo.prepared = scans.prepare(repo, summary, key)  # (the first waits for it)
            lighten_summary(user)
        except (OSError, ShadowError):
            log.debug("preparing the first snapshot of %s failed", root, exc_info=True)
        finally:
            _placing.discard(me)
            ready.set()

    def mark_known(self, root: Path, summary: IndexSummary, ready: threading.Event) -> bool:
        """Watch the folders the index names through fanotify folder marks, unlisted (`ready`
        set once under way): the first snapshot, seeded from the same index, waits for them
        and completes the watch (`completion`)."""
        if not self.unwatchable_by_fanotify():
            return False
        watcher = self.watchers.marked(root, summary.folders, self.watchers.budget.refusal())
        if watcher is None:
            return False
        files = list(summary.tracked)  # (for the hard links: looked at once it is whole)
        folders, links = summary.tracked_folders, summary.gitlinks
        started = watcher.start_known(folders, links, files, ready.set)
        return started and watcher.unavailable is None

    def completion(self, root: Path, repo: ShadowRepo) -> scans.Watching | None:
        """For a snapshot seeded from the user's index, a watcher started from an index
        (`mark_known`), completed on the way (scans.Watching). A watcher started so that
        this snapshot cannot complete is walked in the background instead."""
        watcher = self.watchers.running(root)
        if not isinstance(watcher, TreeWatcher) or not watcher.partial:
            return None
        summary = repo.seed_summary
        if summary is not None and summary.tracked_folders:
            return IndexCompletion(watcher, summary)

        def walk() -> None:
            lower_priority(10, base=0)
            watcher.finish_walk(self.watchers.quiet)

        threading.Thread(target=walk, name="checkpoint-watch-walk", daemon=True).start()
        return None

    def unwatchable(self, summary: IndexSummary) -> bool:
        """No watcher is likely to run for a root of the summary's folders: too many for
        the inotify watches left, and no fanotify here (watching/root_watchers.py)."""
        if not self._stamping():
            return False
        if not self.watchers.enabled:
            return True
        if summary.folders <= self.watchers.budget.left():
            return False
        return self.unwatchable_by_fanotify()

    def unwatchable_by_fanotify(self) -> bool:
        """No filesystem mark here (that needs CAP_SYS_ADMIN, CAP_DAC_READ_SEARCH)."""
        return not (getattr(self.watchers, "fanotify", False) and may_resolve_handles())

    def watch_by_marks(
        self, root: Path, folders: int, ready: threading.Event | None = None
    ) -> bool:
        """Watch a root inotify cannot hold through fanotify folder marks, if they can
        (`ready`: set before their walk, which yields to the first snapshot's scan)."""
        watcher = self.watchers.marked(root, folders, self.watchers.budget.refusal())
        if watcher is not None:
            if ready is not None:
                ready.set()
                lower_priority(10, base=0)
            watcher.start(None, self.watchers.quiet if ready else None)  # (nothing to count)
        return watcher is not None and watcher.unavailable is None


class IndexCompletion:
    """A watcher started from an index, completed by the first snapshot seeded from an
    index (maybe a later one: the folders it adds are watched first)."""

    def __init__(self, watcher: TreeWatcher, summary: IndexSummary) -> None:
        self._watcher = watcher
        self._summary = summary

    def marked(self) -> None:
        summary = self._summary
        self._watcher.complete_known(summary.tracked_folders, summary.gitlinks)

    def listed(self, names: list[str], since_ns: int) -> list[str]:
        tracked = (self._summary.tracked, self._summary.tracked_folders)
        return self._watcher.complete_untracked(names, since_ns, tracked) or []
