"""The walk that finds a workspace's secret files (for sources.py's SecretFiles), and what
it remembers between walks so that a rescan costs what changed, not what exists.

A walk goes down to MAX_DEPTH folders below each root, depth first, and stops after its
budget of entries (inside a folder too: a folder of a million entries costs the budget, not
a listing held whole). It never enters SKIPPED_FOLDERS, links, other file systems (a mount
point: its device differs from the root's), /proc, /sys and /dev (NEVER_WALKED); a folder
that cannot be read gives nothing.

Of each folder it lists it remembers the stamp (inode, mtime, ctime: a name added, removed
or renamed in a folder changes its mtime), how many entries the listing handed over, and at
which of those positions stood a secret file or a folder it entered. The next walk stats
each folder it reaches and lists again only one whose stamp changed (entering the folders
that are new there); an unchanged folder's remembered entries count against the budget as
if listed, so a rescan covers what a fresh walk would, and its listing work is bounded by
the same budget. A folder it no longer reaches (gone, renamed away, past the budget) is
forgotten, and so are the files it held.

A stamp is trusted only when the folder's mtime is older than its listing by MARGIN_NS
(fs/shared_listings.py): a change within the file system's clock tick of the listing could
leave the mtime as it was (coarse clocks, FAT's 2 s), so a younger folder is listed again
at each walk until it ages.

With `shared` (fs/shared_listings.py), a folder the checkpoint watcher's first walk listed
already is taken from it, and a folder listed whole here is left for that walk.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import attrs

from lsp_server.fs.shared_listings import SharedListings, Stamp, settled, stamp_of
from lsp_server.fs.workspace import NEVER_WALKED

MAX_DEPTH = 4
# Folders no secret file of the project lives in, and the biggest ones to walk.
SKIPPED_FOLDERS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox", "target"}
)

IsSecretFile = Callable[[os.DirEntry[str]], bool]


@attrs.frozen
class Listing:
    """What one listing of a folder found."""

    stamp: Stamp
    trusted: bool
    """The stamp is older than the listing by MARGIN_NS (see the module's docstring)."""
    handed: int
    """Entries the listing handed over."""
    complete: bool
    """It handed over every entry (it did not stop at the budget)."""
    found: tuple[tuple[int, str, bool], ...]
    """(position, path, whether a folder the walk enters) of each secret file and each
    folder to enter, in listing order."""

    def usable(self, stamp: Stamp, budget: int) -> bool:
        """Whether a walk with `budget` entries left may take this listing for a new one."""
        return self.trusted and self.stamp == stamp and (self.complete or budget <= self.handed)


@attrs.define
class WalkCounts:
    """What the last walk did (for tests and benchmarks)."""

    listed: int = 0
    """Folders listed."""
    kept: int = 0
    """Folders whose remembered listing stood (a stat each)."""


Memory = dict[tuple[str, int], Listing]  # (folder, depth) -> its last listing


class FileWalk:
    """The secret files below some roots, found again at the cost of what changed.

    `key` (the roots and the secret patterns) keys what is remembered: another key starts
    afresh. A walk reads the memory and replaces it whole when done, so that walks on
    several threads never see a half-made one."""

    def __init__(self, shared: SharedListings | None = None) -> None:
        self._memory: tuple[object, Memory] = (None, {})
        self.counts = WalkCounts()
        self._shared = shared

    def remembered(self) -> set[str]:
        """The folders the last walk listed or kept (what the next one may keep)."""
        return {folder for folder, _ in self._memory[1]}

    def _known(self, key: object) -> Memory:
        known_key, known = self._memory
        return known if known_key == key else {}

    def walk(
        self, roots: Sequence[Path], budget: int, is_secret_file: IsSecretFile, key: object
    ) -> tuple[list[Path], bool]:
        """The secret files down to MAX_DEPTH; and whether the walk ended within `budget`
        entries."""
        known = self._known(key)
        memory: Memory = {}
        counts = WalkCounts()
        found: list[Path] = []
        pending = [(str(root), 0, -1) for root in roots]  # folder, depth, its root's device
        try:
            while pending:
                folder, depth, device = pending.pop()
                if depth and folder in NEVER_WALKED:
                    continue
                st = _folder_stat(folder, follow=depth == 0)
                if st is None or (depth and st.st_dev != device):
                    continue
                stamp = stamp_of(st)
                listing = known.get((folder, depth))
                if listing is not None and listing.usable(stamp, budget):
                    counts.kept += 1
                else:
                    listing = self._list(folder, st, depth, budget, is_secret_file)
                    counts.listed += 1
                memory[folder, depth] = listing
                for position, path, is_folder in listing.found:
                    if position >= budget:
                        break
                    if is_folder:
                        pending.append((path, depth + 1, st.st_dev))
                    else:
                        found.append(Path(path))
                if not listing.complete or listing.handed > budget:
                    return found, False
                budget -= listing.handed
            return found, True
        finally:
            self._memory = (key, memory)
            self.counts = counts

    def _list(
        self, folder: str, st: os.stat_result, depth: int, budget: int, test: IsSecretFile
    ) -> Listing:
        """`_list`, through the listings shared with the watcher's walk, if any: its
        listing of `folder` if current, else one made now, left for it if whole."""
        shared = self._shared
        if shared is None:
            return _list(folder, st, depth, budget, test)
        taken = shared.take(folder, lambda: stamp_of(st), by_root_walk=False)
        if taken is not None:
            return _list(folder, st, depth, budget, test, entries=taken)
        if not shared.wanted_by_root_walk:
            return _list(folder, st, depth, budget, test)
        listed: list[os.DirEntry[str]] = []
        with shared.listing(folder):
            listing = _list(folder, st, depth, budget, test, entries=_kept(folder, listed))
            if listing.complete:
                shared.leave(folder, st, listed, by_root_walk=False)
        return listing

    def top_level(
        self, roots: Sequence[Path], budget: int, is_secret_file: IsSecretFile, key: object
    ) -> set[Path]:
        """The secret files right in the roots: each root listed whole, entry by entry (only
        the names that could be a secret looked at), and kept for the next walk (without
        the folders past `budget` entries, which no walk reaches: a root of a million
        folders is not held)."""
        memory = dict(self._known(key))
        found: set[Path] = set()
        for root in roots:
            st = _folder_stat(str(root), follow=True)
            if st is None:
                continue
            listing = _list(str(root), st, 0, None, is_secret_file, folders_within=budget)
            memory[str(root), 0] = listing
            found.update(Path(path) for _, path, is_folder in listing.found if not is_folder)
        self._memory = (key, memory)
        return found


def _list(
    folder: str,
    st: os.stat_result,
    depth: int,
    budget: int | None,
    is_secret_file: IsSecretFile,
    folders_within: int | None = None,
    entries: Iterable[os.DirEntry[str]] | None = None,
) -> Listing:
    """List `folder` (whose stat is `st`), or go through its `entries` listed already: at
    most `budget` entries, the folders to enter among the first `folders_within`."""
    found: list[tuple[int, str, bool]] = []
    handed = 0
    complete = True
    within = budget if folders_within is None else folders_within
    for entry in listed_entries(folder) if entries is None else entries:
        if handed == budget:
            complete = False
            break
        if entry.is_dir(follow_symlinks=False):
            if (
                depth < MAX_DEPTH
                and entry.name not in SKIPPED_FOLDERS
                and (within is None or handed < within)
            ):
                found.append((handed, entry.path, True))
        elif is_secret_file(entry):
            found.append((handed, entry.path, False))
        handed += 1
    return Listing(stamp_of(st), settled(st), handed, complete, tuple(found))


def _folder_stat(folder: str, *, follow: bool) -> os.stat_result | None:
    """The folder's stat (a root's link followed, no other), or None: gone, not a folder."""
    try:
        st = os.stat(folder, follow_symlinks=follow)  # noqa: PTH116 (a str, no link followed)
    except OSError:
        return None
    return st if stat.S_ISDIR(st.st_mode) else None


def _kept(folder: str, kept: list[os.DirEntry[str]]) -> Iterator[os.DirEntry[str]]:
    """`listed_entries`, each also appended to `kept`."""
    for entry in listed_entries(folder):
        kept.append(entry)
        yield entry


def listed_entries(folder: str) -> Iterator[os.DirEntry[str]]:
    """The folder's entries as the kernel hands them over (none held beyond the current
    one); nothing when it cannot be read."""
    try:
        with os.scandir(folder) as entries:
            yield from entries
    except OSError:
        return
