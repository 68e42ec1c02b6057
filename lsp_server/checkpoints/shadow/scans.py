"""The scans of a root no watcher can speak for (blocking; under the repository's locks):
the full scan, and the scan by the folders' stamps of the last one (folder_stamps.py).

A full scan is `git add -A` of the whole root; beside it, in threads of their own (the
machine's other cores), the ignored files not in the index are looked for (ignored.py) and
the folders are stamped. An index just seeded from the user's (seed.py) is brought up to
date as `git status` would: its tracked files by `git add -u`, beside the walk that stamps
the folders (or, watched, git's own listing) and finds the names the index does not hold,
the only ones `git add -A` and the ignored files' listing then look at. Both give the tree
a plain `git add -A` gives. A watcher started from that index (watching/watcher.py) is
completed on the way (`Watching`): `git add -u` waits for its watches of the tracked
folders, git's listing of the others runs beside them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Protocol

import attrs

from lsp_server.checkpoints.shadow.folder_stamps import Candidates, FolderStamps
from lsp_server.checkpoints.shadow.ignored import IgnoredFiles
from lsp_server.checkpoints.shadow.index_summary import IndexSummary
from lsp_server.checkpoints.shadow.repository import ShadowRepo
from lsp_server.checkpoints.shadow.tree_changes import tracked_file

MAX_NAMED_PATHS = 200
"""More names than this: the plain full scan. git matches every index entry with every
name given (`git add -A` of 1,000 names took 3.8 s on 200,000 entries, of 3,000 21 s)."""


@attrs.define
class Prepared:
    """A first walk of a git root started ahead of its first snapshot (at start, in a
    thread): the folders stamped and the names the user's index did not hold then."""

    key: tuple[int, int, int]
    """The user's index file it is compared with (seed.py's index_key)."""
    stamps: FolderStamps
    walk: Beside
    """The walk, running or done (its result: the Candidates)."""


def prepare(repo: ShadowRepo, summary: IndexSummary, key: tuple[int, int, int]) -> Prepared:
    """Start walking the root against `summary` (the user's index whose key is `key`)."""
    stamps = FolderStamps(repo.work_tree, repo.kept_out)
    stamps.begin()
    tracked, folders = summary.tracked, summary.tracked_folders
    return Prepared(key, stamps, Beside(lambda: stamps.walk(tracked, folders)))


class Watching(Protocol):
    """A watcher started from the seeded index, that the first snapshot completes."""

    def marked(self) -> None:
        """Return once every folder holding a tracked path is watched."""

    def listed(self, names: list[str], since_ns: int) -> list[str]:
        """Watch the folders among git's untracked `names`, listed from `since_ns` on;
        returns the names that listing may have missed (made meanwhile)."""


def full_scan(
    repo: ShadowRepo,
    ignored: IgnoredFiles,
    stamps: FolderStamps | None,
    watching: Watching | None = None,
) -> str:
    """The root's tree from a scan of all of it. With `stamps` (a root no watcher speaks
    for), the folders are stamped on the way (or a walk prepared ahead is brought up to
    date) and kept as `repo.stamps` for the next snapshot. `watching`: given the names the
    seeded index does not hold before any of them is read (a watcher started from the
    index watches their folders then: watching/watcher.py)."""
    summary, repo.seed_summary = repo.seed_summary, None
    prepared, repo.prepared = repo.prepared, None
    repo.stamps = None
    walked, keep = False, stamps is not None
    if summary is not None:
        # Watched or not, a first snapshot from the seeded index looks at what git
        # status would; the stamps it takes are kept only where no watcher runs.
        stamps = stamps or FolderStamps(repo.work_tree, repo.kept_out)
        paths: list[str] | None = None
        if isinstance(prepared, Prepared) and prepared.key == repo.seed_key:
            # Names made since that walk, as by the stamps (the walk stamped each folder
            # before it listed it; every folder is stamped again here).
            # `git add -u` beside what is left of the walk, then what changed since.
            stamps = prepared.stamps
            prepared.walk.around(repo.add_tracked)
            found = prepared.walk.result
            assert isinstance(found, Candidates)
            later = stamps.changed()
            named = [*found.paths, *found.new_folders, *later.paths, *later.new_folders]
            paths = [p for p in dict.fromkeys(named) if os.path.lexists(repo.work_tree / p)]
            walked = True
        elif summary.tracked_folders and not keep:
            # Watched: no stamps to take; git lists the names the index does not hold.
            since = time.time_ns()
            names = Beside(lambda: untracked_names(repo))
            if watching is not None:
                try:
                    watching.marked()  # (before `add -u` reads a tracked file)
                except BaseException:
                    names.join()
                    raise
            names.around(repo.add_tracked)
            assert isinstance(names.result, list)
            paths = names.result
            if watching is not None:
                paths = [*paths, *watching.listed(paths, since)]
        elif summary.tracked_folders:
            stamps.begin()  # before git lists any folder
            stamper, tracked, folders = stamps, summary.tracked, summary.tracked_folders
            walk = Beside(lambda: stamper.walk(tracked, folders))
            walk.around(repo.add_tracked)
            assert isinstance(walk.result, Candidates)
            paths = [*walk.result.paths, *walk.result.new_folders]
            walked = True
        if paths is not None and len(paths) <= MAX_NAMED_PATHS:
            ignored.record(paths)
            repo.add_paths(paths)
            return _keep(repo, stamps if keep else None, repo.write_snapshot())
        if not keep:
            stamps = None
    if stamps is not None and not walked:
        stamps.begin()  # before git lists any folder
    # A split index's shared file goes when `git add` writes a new one: the ignored files
    # are then looked for first (a seeded index is whole: beside it).
    split = any(repo.git_dir.glob("sharedindex.*"))
    listing = None if split else Beside(ignored.candidates)
    walking = Beside(stamps.walk) if stamps is not None and not walked else None
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
    return _keep(repo, stamps, repo.write_snapshot())


def untracked_names(repo: ShadowRepo) -> list[str]:
    """Every name the index does not hold, ignored or not (a folder holding no tracked
    path as one name): one walk, what `git status` reads."""
    raw = repo.git.run("ls-files", "-z", "--others", "--directory")
    names = (name.rstrip("/") for name in raw.decode("utf-8", "surrogateescape").split("\0"))
    kept_out = repo.kept_out
    return [
        name
        for name in names
        if name and not any(name == k or name.startswith(k + "/") for k in kept_out)
    ]


def _keep(repo: ShadowRepo, stamps: FolderStamps | None, tree: str) -> str:
    if stamps is not None:
        stamps.tree = tree
        repo.stamps = stamps
    return tree


def stamped_scan(repo: ShadowRepo, ignored: IgnoredFiles) -> tuple[str | None, str]:
    """(the root's tree, how many folders were listed) by the stamps of the last
    snapshot, or (None, why a full scan must run instead)."""
    stamps, base = repo.stamps, repo.current()
    if stamps is None or base is None or stamps.tree != base:
        return None, ""
    repo.stamps = None  # until this snapshot is through
    # The folders stat'ed and the changed ones listed beside `git add -u` (which lists no
    # folder: the new names go to git after both).
    changing = Beside(stamps.changed)
    changing.around(repo.add_tracked)
    found = changing.result
    assert isinstance(found, Candidates)
    # Tracked files the last tree holds (read in-process where it can) are `add -u`'s.
    files = [p for p in found.paths if not tracked_file(repo.trees, base, p)]
    paths = [*files, *found.new_folders]
    if len(paths) > MAX_NAMED_PATHS:
        return None, f"; {len(paths):,} new names"
    ignored.record(paths)
    repo.add_paths(paths)
    tree = repo.write_snapshot()
    for change in repo.diff(base, tree):
        names = (change.path, change.source or "")
        if any(name.rpartition("/")[2] == ".gitignore" for name in names):
            repo.void_last()  # (not whole: the full scan that follows is)
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
        finally:
            del self._action  # (what it held: a first walk's 200,000 tracked paths)

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
