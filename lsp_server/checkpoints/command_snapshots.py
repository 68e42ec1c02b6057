"""Checkpoints of shell commands: every root snapshotted before a command and again when
it ends; the difference is what it changed (docs/CHECKPOINTS.md). A snapshot adds only the
paths the root's watcher saw change, or scans the whole root when it cannot say (watcher.py).
Ignored files are recorded within their budget (ignored.py); what could not be recorded,
and a checkpoint that failed, become notes the command's result says.

`CommandSnapshots` is the command side of the checkpoint service (recorder.py), as the
write queue (write_queue.py) is the writers' side: blocking, run in worker threads, one at
a time per root (the service's root lock and the repository's file lock).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from lsp_server.checkpoints import attribution
from lsp_server.checkpoints.file_states import is_nested_repo, record_of
from lsp_server.checkpoints.records import Checkpoint, CheckpointStore
from lsp_server.checkpoints.shadow import objects
from lsp_server.checkpoints.shadow.ignored import IgnoredFiles, unrecorded_changes
from lsp_server.checkpoints.shadow.isolated_git import ShadowError
from lsp_server.checkpoints.shadow.tree_changes import TreeChange
from lsp_server.checkpoints.watcher import RootWatchers
from lsp_server.checkpoints.windows import CommandWindow
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.sandbox.protected_scan import may_be_placeholder

log = logging.getLogger(__name__)
_EMPTY_BLOB = objects.object_id("blob", b"")


def is_placeholder_change(change: TreeChange) -> bool:
    """An empty protected name that appeared or went: the sandbox's placeholder for another
    command running meanwhile (sandbox/placeholders.py), not this command's change."""
    entry = {"A": change.new, "D": change.old}.get(change.status)
    return entry is not None and entry.oid == _EMPTY_BLOB and may_be_placeholder(change.path)


def unpair_placeholders(changes: list[TreeChange]) -> Iterator[TreeChange]:
    """The changes, a placeholder's removal that git paired with an empty file made (a
    rename of identical content) seen as the two changes it is."""
    for change in changes:
        old, source = change.old, change.source
        if source and old and old.oid == _EMPTY_BLOB and may_be_placeholder(source):
            yield TreeChange("A", change.path, None, change.new)
            yield TreeChange("D", source, old, None)
        else:
            yield change


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

    def _ignored(self, root: Path) -> IgnoredFiles:
        budget = self._config.ignored_budget_mb * 1024 * 1024
        return IgnoredFiles(self._store(root).repo, budget, self._config.skip_folders)

    def before(self, root: Path) -> tuple[str, dict[str, list[int | str]]] | str | None:
        """The root's snapshot before a command: (tree, ignored files left out); a string
        says why none could be taken, None: the root is gone."""
        store = self._store(root)
        budget = self._config.budget_mb * 1024 * 1024
        with self._root_lock(root), store.repo.locked():
            if not root.is_dir():
                return None
            if not store.snapshots_fit(budget):
                return "the workspace is larger than checkpoints.budget_mb"
            try:
                store.ensure()
                ignored = self._ignored(root)
                return self._snapshot(root, ignored), ignored.left_out()
            except (ShadowError, OSError) as exc:
                log.exception("checkpoint snapshot of %s failed", root)
                self.watchers.invalidate(root, "the last snapshot failed")
                return f"the snapshot failed ({str(exc).strip()})"

    def _snapshot(self, root: Path, ignored: IgnoredFiles) -> str:
        """The root's tree now: from the paths the watcher saw change when it can say, else
        (and when adding them fails) from a full scan (watcher.py says when)."""
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
        ignored.record()
        tree = repo.snapshot()
        self.watchers.scans[root] = f"full scan: {reason}"
        return tree

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
                )
            except (ShadowError, OSError) as exc:
                log.exception("checkpoint of %s in %s failed", window.call_id, root)
                self.watchers.invalidate(root, "the last snapshot failed")
                window.notes.append(
                    f"[no checkpoint of {root}: recording the change failed ({str(exc).strip()})]"
                )
                return None
