"""The scans of a root no watcher can speak for (blocking; under the repository's locks):
the full scan, and the scan by the folders' stamps of the last one (folder_stamps.py).

A full scan is `git add -A` of the whole root; beside it, in threads of their own (the
machine's other cores), the ignored files not in the index are looked for (ignored.py) and
the folders are stamped. An index just seeded from the user's (seed.py) is brought up to
date as `git status` would: its tracked files by `git add -u`, beside the walk that stamps
the folders and finds the names the index does not hold, the only ones `git add -A` and
the ignored files' listing then look at. Both give the tree a plain `git add -A` gives.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from lsp_server.checkpoints.shadow.folder_stamps import Candidates, FolderStamps
from lsp_server.checkpoints.shadow.ignored import IgnoredFiles
from lsp_server.checkpoints.shadow.repository import ShadowRepo
from lsp_server.checkpoints.shadow.tree_changes import tracked_file

MAX_NAMED_PATHS = 1000
"""More names than this: the plain full scan (git matches each path with every name)."""


def full_scan(repo: ShadowRepo, ignored: IgnoredFiles, stamps: FolderStamps | None) -> str:
    """The root's tree from a scan of all of it; `stamps` (when given) taken on the way,
    valid for this tree."""
    summary, repo.seed_summary = repo.seed_summary, None
    if stamps is not None:
        stamps.begin()  # before git lists any folder
        if summary is not None:
            stamper, tracked, folders = stamps, summary.tracked, summary.tracked_folders
            walk = Beside(lambda: stamper.walk(tracked, folders))
            walk.around(repo.add_tracked)
            found = walk.result
            assert isinstance(found, Candidates)
            paths = [*found.paths, *found.new_folders]
            if len(paths) <= MAX_NAMED_PATHS:
                ignored.record(paths)
                repo.add_paths(paths)
                return repo.write_snapshot()
            stamps = None  # stamped already: the plain full scan is left
    # A split index's shared file goes when `git add` writes a new one: the ignored files
    # are then looked for first (a seeded index is whole: beside it).
    split = any(repo.git_dir.glob("sharedindex.*"))
    listing = None if split else Beside(ignored.candidates)
    walking = Beside(stamps.walk) if stamps is not None else None
    candidates = ignored.candidates() if split else None
    try:
        repo.add_all()
    finally:
        for beside in (listing, walking):
            if beside is not None:
                beside.join()
    if listing is not None:
        candidates = listing.result  # type: ignore[assignment]
    assert isinstance(candidates, list)
    ignored.record(found=candidates)
    return repo.write_snapshot()


def stamped_scan(repo: ShadowRepo, ignored: IgnoredFiles) -> tuple[str | None, str]:
    """(the root's tree, how many folders were listed) by the stamps of the last
    snapshot, or (None, why a full scan must run instead)."""
    stamps, base = repo.stamps, repo.current()
    if stamps is None or base is None or stamps.tree != base:
        return None, ""
    repo.stamps = None  # until this snapshot is through
    found = stamps.changed()
    # Tracked files the last tree holds (read in-process where it can) are `add -u`'s.
    files = [p for p in found.paths if not tracked_file(repo.trees, base, p)]
    paths = [*files, *found.new_folders]
    if len(paths) > MAX_NAMED_PATHS:
        return None, f"; {len(paths):,} new names"
    ignored.record(paths)
    tree = repo.snapshot_stamped(paths)
    for change in repo.diff(base, tree):
        names = (change.path, change.source or "")
        if any(name.rpartition("/")[2] == ".gitignore" for name in names):
            return None, "; a .gitignore changed"  # what is ignored changed anywhere
    stamps.tree = tree
    repo.stamps = stamps
    return tree, f"{found.listed:,} of {found.folders:,} folders listed"


class Beside:
    """An action run in a thread of its own beside the caller's; `join` raises what it
    raised, `result` is what it returned."""

    def __init__(self, action: Callable[[], object]) -> None:
        self._action = action
        self.result: object = None
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.result = self._action()
        except BaseException as exc:  # raised again in the caller's thread
            self._failed = exc

    def join(self) -> None:
        self._thread.join()
        if self._failed is not None:
            raise self._failed

    def around(self, action: Callable[[], object]) -> None:
        """Run `action` here, then join."""
        try:
            action()
        finally:
            self.join()
