"""Checkpoints of shell commands: every root snapshotted before a command and again when
it ends; the difference is what it changed (docs/CHECKPOINTS.md). A snapshot adds only the
paths the root's watcher saw change, or scans the whole root when it cannot say
(watching/watcher.py). Ignored files are recorded within their budget (ignored.py); what
could not be recorded, and a checkpoint that failed, become notes the command's result says.

`CommandSnapshots` is the command side of the checkpoint service (recorder.py), as the
write queue (write_queue.py) is the writers' side: blocking, run in worker threads, one at
a time per root (the service's root lock and the repository's file lock).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from lsp_server.checkpoints import journal
from lsp_server.checkpoints.file_states import (
    is_nested_repo,
    is_placeholder_change,
    record_of,
    unpair_placeholders,
)
from lsp_server.checkpoints.first_snapshot import FirstSnapshots, Outcome
from lsp_server.checkpoints.records import Checkpoint, CheckpointStore
from lsp_server.checkpoints.shadow import scans
from lsp_server.checkpoints.shadow.folder_stamps import FolderStamps
from lsp_server.checkpoints.shadow.ignored import IgnoredFiles, unrecorded_changes
from lsp_server.checkpoints.shadow.index_summary import IndexSummary
from lsp_server.checkpoints.shadow.isolated_git import ShadowError
from lsp_server.checkpoints.shadow.listed_scan import listed_scan
from lsp_server.checkpoints.shadow.repository import ShadowRepo
from lsp_server.checkpoints.shadow.seed import (
    user_git_dir,
    user_index_summary,
)
from lsp_server.checkpoints.sharing import attribution
from lsp_server.checkpoints.watch_start import WatchStart
from lsp_server.checkpoints.watching.root_budget import OverBudget, Tally, measure
from lsp_server.checkpoints.watching.root_watchers import RootWatchers
from lsp_server.checkpoints.watching.watcher import TreeWatcher
from lsp_server.checkpoints.windows import CommandWindow
from lsp_server.config.tree import CheckpointsConfig

log = logging.getLogger(__name__)

FROM_WALK = "; from the names of the watcher's first walk"


class CommandSnapshots:
    """A root's snapshot before a command (`before`) and its checkpoint after (`after`):
    the changes between the two trees, recorded in the root's store."""

    def __init__(
        self,
        store: Callable[[Path], CheckpointStore],
        root_lock: Callable[[Path], threading.Lock],
        config: CheckpointsConfig,
        watchers: RootWatchers,
        grew: Callable[[Path, Iterable[str]], None],
    ) -> None:
        """`grew`: told the paths a checkpoint changed, for the size bounds."""
        self._store = store
        self._root_lock = root_lock
        self._config = config
        self.watchers = watchers
        self._grew = grew
        self.first = FirstSnapshots(self._first, self._tally_of, self._background)
        self._notes: dict[Path, list[str]] = {}
        self._preparing: dict[Path, threading.Event] = {}  # set: a first snapshot may go on
        self.folder_stamps = True
        """Snapshots of roots no watcher watches look only at folders whose stamp changed
        (folder_stamps.py); off, each scans the whole root (tests compare both)."""
        self.from_walk = True
        """The full scan right after a watcher's first walk takes the names that walk
        listed (listed_scan.py); off, git walks the root again (tests compare both)."""
        self.starts = WatchStart(
            lambda root: store(root).repo, config, watchers, self._preparing, self._stamping
        )

    def _stamping(self) -> bool:
        return self.folder_stamps

    def _ignored(self, root: Path) -> IgnoredFiles:
        budget = self._config.ignored_budget_mb * 1024 * 1024
        return IgnoredFiles(self._store(root).repo, budget, self._config.skip_folders)

    def before(self, root: Path) -> Outcome:
        """The root's snapshot before a command: (tree, ignored files left out); a string
        says why none could be taken, None: the root is gone (or the reason was said)."""
        go, first = self.first.ready(root)
        if not go or first is not None:
            return first
        return self._before(root)

    def report(self, roots: list[Path]) -> dict[str, object]:
        """toolhost/status's `checkpoints`: the roots' shell checkpoints, the watches."""
        budget, marks = self.watchers.budget, self.watchers.marks_budget
        watches = {
            "held": budget.used,
            "limit": budget.limit,
            "maxUserWatches": budget.system_limit,
            "share": budget.share,
        }
        return {
            "roots": [self.status(root) for root in roots],
            "inotifyWatches": watches,
            "folderMarks": {"held": marks.used, "limit": marks.limit, "share": marks.share},
            "attribution": attribution.mechanism(self._config.exact_attribution),
        }

    def status(self, root: Path) -> dict[str, object]:
        """The root's shell checkpoints for toolhost/status."""
        job = self.first.job(root)
        if job is None:
            shell = "on (the first command that can write takes the first snapshot)"
        elif not job.done.is_set():
            shell = f"on; the first snapshot is under way ({job.tally.files:,} files so far)"
        elif isinstance(job.outcome, str):
            shell = f"off: {job.outcome}"
        else:
            shell = "on"
        watcher = self.watchers.running(root)
        return {
            "root": str(root),
            "shellCheckpoints": shell,
            "files": job.tally.files if job else None,
            "megabytes": job.tally.bytes >> 20 if job else None,
            "watches": watcher.watches if watcher else 0,
            "folderMarks": watcher.folder_marks if isinstance(watcher, TreeWatcher) else 0,
            "notWatched": watcher.unavailable if watcher else None,
            "watchedBy": self.watchers.watched_by(root),
            "lastSnapshot": self.watchers.scans.get(root),
        }

    def take_notes(self, root: Path) -> list[str]:
        """What the command's result says of the root besides its checkpoint (once)."""
        return self._notes.pop(root, [])

    def _background(self, root: Path) -> bool:
        """The root's first snapshot may be long: it is not seeded from git (seed.py)."""
        return not (self._config.seed_from_git and user_git_dir(root) is not None)

    def regenerable(self, root: Path) -> list[str]:
        """Folder names no snapshot of `root` records, ignored or not, where a walk measures
        it (and leaves them uncounted: root_budget.py), not the user's index."""
        return list(self._config.skip_folders) if self._background(root) else []

    def _tally_of(self, root: Path) -> Tally:
        megabytes = self._config.max_root_mb
        if self._background(root):  # every byte goes into the state folder
            megabytes = min(megabytes, self._config.budget_mb)
        return Tally(self._config.max_root_files, megabytes << 20, self._config.measure_seconds)

    def _first(self, root: Path, tally: Tally) -> Outcome:
        """Measure the root (during the watcher's first walk when there is one), then take
        its first snapshot, as `_before` does."""
        store = self._store(root)
        repo = store.repo
        preparing = self._preparing.pop(root, None)
        if preparing is not None:
            preparing.wait()
        # The measure takes the root's lock, not the repository's: another toolhost process
        # on the root holds that one through its own first snapshot, and this count (what
        # the commands waiting here judge the root's size by) must not stall behind it.
        with self._root_lock(root):
            try:
                if repo.exists():
                    repo.find_kept_out()  # (the snapshot ensures the rest, locked)
                else:
                    with repo.locked():
                        store.ensure()  # writers find it there: none waits for the walk
                summary = self._index_summary(root)
                if summary is not None:
                    tally.count(summary.files, summary.bytes)
                    self._start_watcher(root, summary.folders)
                elif not (self.watchers.enabled and self.watchers.of(root).start(tally)):
                    skip = frozenset(self._config.skip_folders)
                    measure(root, repo.kept_out, skip, tally, self.watchers.listings)
            except OverBudget as exc:
                log.warning("checkpoints of %s: shell checkpoints are off: %s", root, exc)
                return f"shell checkpoints are off for this root: {exc}"
            except (OSError, ShadowError):
                return None  # gone, unreadable, no repository: the command's snapshot says
        tally.measured = True
        watcher = self.watchers.running(root)
        if watcher is not None and watcher.unavailable is not None:
            self._notes.setdefault(root, []).append(
                f"[checkpoints of {root}: {watcher.unavailable}; each snapshot scans the "
                "whole root instead, as git status does]"
            )
        chosen = self.watchers.chosen(root)
        if chosen is not None:
            self._notes.setdefault(root, []).append(f"[checkpoints of {root}: {chosen}]")
        return self._before(root)

    def prepare_in_background(self, roots: Iterable[Path]) -> None:
        """At start, in threads: each git root's watcher started, or its folders stamped
        against the index (watch_start.py)."""
        self.starts.prepare_in_background(r for r in roots if not self._background(r))

    def _index_summary(self, root: Path) -> IndexSummary | None:
        """What the user's index says of a root whose first snapshot is seeded from it."""
        user = user_git_dir(root) if self._config.seed_from_git else None
        return None if user is None else user_index_summary(user)

    def _start_watcher(self, root: Path, folders: int) -> None:
        """Start the root's watcher, measured already (from the index): a root whose tracked
        files alone lie in more folders than the watches left is not walked to find out."""
        if not self.watchers.enabled:
            return
        budget = self.watchers.budget
        watcher = self.watchers.of(root)
        marked = isinstance(watcher, TreeWatcher) and watcher.marks  # (by the preparation)
        if not marked and folders > budget.left():
            if self.starts.unwatchable_by_fanotify() and self.starts.watch_by_marks(root, folders):
                return
            if watcher.unavailable is None and self.watchers.chosen(root) is None:
                watcher.unavailable = f"the root is not watched ({budget.refusal()})"
            return
        watcher.start(Tally(1 << 62, 1 << 62, float("inf")))

    def _before(self, root: Path) -> Outcome:
        store = self._store(root)
        budget = self._config.budget_mb * 1024 * 1024
        with self._root_lock(root), store.repo.locked():
            if not root.is_dir():
                return None
            if not store.snapshots_fit(budget):
                return "the workspace is larger than checkpoints.budget_mb"
            try:
                store.ensure()
                store.repo.seeding = self._config.seed_from_git
                ignored = self._ignored(root)
                return self._snapshot(root, ignored), ignored.left_out()
            except (ShadowError, OSError) as exc:
                log.exception("checkpoint snapshot of %s failed", root)
                self.watchers.invalidate(root, "the last snapshot failed")
                return f"the snapshot failed ({str(exc).strip()})"

    def _snapshot(self, root: Path, ignored: IgnoredFiles) -> str:
        with self.watchers.scanning():
            return self._scan(root, ignored)

    def _scan(self, root: Path, ignored: IgnoredFiles) -> str:
        """The root's tree now: from the paths the watcher saw change when it can say, else
        (and when adding them fails) from a full scan (watching/watcher.py says when)."""
        repo = self._store(root).repo
        changed = self.watchers.take(root)
        if changed.rescan is None and repo.current() is not None:
            try:
                ignored.record(changed.created)
                tree = repo.snapshot_paths(changed.paths)
                self.watchers.scans[root] = "changed paths"
                return tree
            except (ShadowError, OSError) as exc:
                log.warning("checkpoints of %s: adding the changed paths failed (%s)", root, exc)
                reason = f"adding the changed paths failed ({str(exc).strip()})"
        else:
            reason = changed.rescan or "the shadow index changed since the last snapshot"
            stamped, why = self._stamped(root, repo, ignored)
            if stamped is not None:
                return stamped
            reason += why
        if repo.seed():
            reason += "; seeded from the repository's index"
        completing = self.starts.completion(root, repo)
        unwatched = completing is None and self.folder_stamps and self._unwatched(root)
        stamps = FolderStamps(root, repo.kept_out) if unwatched else None
        listed = changed.listing if self.from_walk and repo.seed_summary is None else None
        if listed is not None:  # the watcher's first walk stands for the scan's (git's) walk
            files, unreadable, nested = listed.files, listed.unreadable, listed.nested
            from_walk = listed_scan(repo, ignored, files, unreadable, nested, listed.changed)
            if from_walk is not None:
                self.watchers.scans[root] = f"full scan: {reason}{FROM_WALK}"
                return from_walk
        try:
            tree = scans.full_scan(repo, ignored, stamps, completing)
        except ShadowError as exc:
            if not repo.seeded():
                raise
            # Objects borrowed from the user's store are gone (their gc): seed afresh.
            log.warning("checkpoints of %s: the seeded index failed (%s); seeding again", root, exc)
            repo.reset_index()
            ignored.forget()
            repo.seed()
            repo.seed_summary = None  # (the plain full scan follows)
            ignored.record()
            tree = repo.snapshot()
        self.watchers.scans[root] = f"full scan: {reason}"
        return tree

    def _unwatched(self, root: Path) -> bool:
        """No watcher can say what changed in the root (yet: while its first walk is under
        way, and for the snapshot after it): its snapshots scan (or stamp) it."""
        watcher = self.watchers.running(root)
        if isinstance(watcher, TreeWatcher) and watcher.starting:
            return True
        return watcher is None or watcher.unavailable is not None

    def _stamped(
        self, root: Path, repo: ShadowRepo, ignored: IgnoredFiles
    ) -> tuple[str | None, str]:
        """The root's tree from its folders' stamps (folder_stamps.py) when the last
        snapshot took them; (None, why not) when a full scan must run instead."""
        if not self.folder_stamps:
            return None, ""
        try:
            tree, why = scans.stamped_scan(repo, ignored)
        except (ShadowError, OSError) as exc:
            log.warning("checkpoints of %s: the snapshot by stamps failed (%s)", root, exc)
            return None, f"; the snapshot by folders' stamps failed ({str(exc).strip()})"
        if tree is not None:
            self.watchers.scans[root] = f"folders' stamps ({why})"
            return tree, ""
        return None, why

    def after(self, root: Path, before: str, window: CommandWindow) -> Checkpoint | None:
        """The command's checkpoint of `root` (`before`: the tree it started from); None
        when it changed nothing there or recording failed (`window.notes` says)."""
        store = self._store(root)
        with self._root_lock(root), store.repo.locked():
            try:
                ignored = self._ignored(root)
                after = self._snapshot(root, ignored)
                lost = unrecorded_changes(root, window.left_out.get(root, {}), ignored.left_out())
                window.notes += [f"[{change.describe()}]" for change in lost]
                changes = store.repo.diff(before, after)
                files, others = attribution.own_changes(
                    store,
                    window,
                    root,
                    [
                        record_of(change)
                        for change in unpair_placeholders(changes)
                        if not is_nested_repo(change) and not is_placeholder_change(change)
                    ],
                    journal.pending(store.folder),  # before the records: see own_changes
                )
                window.notes += [
                    f"[{f.path} (over checkpoints.max_file_bytes) was changed: recorded by size "
                    "and hash only, a revert cannot restore it]"
                    for f in files
                    if f.not_stored
                ]
                if not files:
                    return None
                self._grew(root, (f.path for f in files))
                return store.add(
                    window.call_id,
                    window.session,
                    window.tool,
                    window.started,
                    files,
                    reads="disk",
                    label=window.label,
                    others=others,
                    agent=window.agent,
                    exact=window.written is not None,
                )
            except (ShadowError, OSError) as exc:
                log.exception("checkpoint of %s in %s failed", window.call_id, root)
                self.watchers.invalidate(root, "the last snapshot failed")
                window.notes.append(
                    f"[no checkpoint of {root}: recording the change failed ({str(exc).strip()})]"
                )
                return None
