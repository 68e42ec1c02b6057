"""The folders of a root no watcher watches, stamped between snapshots (blocking).

A new name (an untracked file, an ignored one, a folder) changes its folder's mtime and
ctime, so a snapshot of a root that is not watched need not read every folder again as
`git add -A` does: it stats the folders the last snapshot stamped, lists those whose stamp
changed, walks the folders that are new, and hands the new names (`Candidates.paths`: those
whose inode changed since the folder's last stamp, and new folders whole) to a
`git add -A -- <paths>`; a `git add -u` follows the tracked files' contents as `git status`
does (repository.py). A name made in a folder, moved or linked into it gets an inode change
time of that moment, so the outcome is the full scan's.

A stamp is trusted only when it is older than the walk that took it by MARGIN_NS (a change
within the file system's clock tick of the walk, or during it, leaves the folder's time
unchanged): a younger folder is listed again at every snapshot until it has aged. `.git`,
the inside of nested repositories, toolhost's own folders, other file systems and /proc,
/sys, /dev are never walked.

What changes no folder's time and needs a full scan: a .gitignore or info/exclude that
changed (what is ignored changes anywhere; the callers see it and scan in full).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

MARGIN_NS = 2_000_000_000
"""A folder changed within 2 s of its stamp is listed again (clock ticks, FAT's 2 s)."""

NEVER_WALKED = frozenset(("/proc", "/sys", "/dev"))

Stamp = tuple[int, int, int]  # mtime_ns, ctime_ns, inode


@attrs.define
class Candidates:
    paths: list[str]
    """New names to add (files, symlinks ...)."""
    new_folders: list[str]
    """New folders (and nested repositories) to add whole."""
    folders: int
    """Folders stamped."""
    listed: int
    """Folders listed again."""


class FolderStamps:
    """The stamps of a root's folders as of one snapshot (`tree`)."""

    def __init__(self, root: Path, kept_out: Sequence[str]) -> None:
        self.root = root
        self.kept_out = tuple(kept_out)
        self.tree: str | None = None
        """The snapshot these stamps were taken for: valid while it is the current one."""
        self._stamps: dict[str, Stamp] = {}
        self._racy: set[str] = set()
        self._new_folders: list[str] = []
        self._dev = 0
        self._since = 0
        self._tracked: frozenset[str] | None = None
        self._tracked_folders: frozenset[str] = frozenset()

    def begin(self) -> None:
        """The walk's start: call before the full scan that goes with it lists any folder
        (`walk` may then run beside it: a folder changed from here on counts as young)."""
        self._since = time.time_ns() - MARGIN_NS

    def walk(
        self, tracked: frozenset[str] | None = None, tracked_folders: frozenset[str] = frozenset()
    ) -> Candidates:
        """Stamp every folder (`begin` called first). With `tracked` (the paths of the
        index a first snapshot starts from, and the folders holding them), the names not
        in it are the candidates: files, and folders holding no tracked path whole."""
        self._stamps.clear()
        self._racy.clear()
        self._new_folders = []
        first: list[str] = []
        self._tracked, self._tracked_folders = tracked, tracked_folders
        try:
            self._dev = self.root.stat().st_dev
            self._walk("", self._since, first)
        finally:
            self._tracked, self._tracked_folders = None, frozenset()
        if self.kept_out:
            first = [rel for rel in first if not self._is_kept_out(rel)]
            self._new_folders = [rel for rel in self._new_folders if not self._is_kept_out(rel)]
        return Candidates(first, self._new_folders, len(self._stamps), len(self._stamps))

    def changed(self) -> Candidates:
        """The names a snapshot must look at since the stamps were taken, and new stamps."""
        since = time.time_ns() - MARGIN_NS
        listed: list[tuple[str, int]] = []
        gone: set[str] = set()
        for folder, old in self._stamps.items():
            now = self._stamp(folder)
            if now is None:
                gone.add(folder)
            elif now != old or folder in self._racy:
                listed.append((folder, min(old[0], old[1]) - MARGIN_NS))
        if gone:
            self._drop(gone)
        paths: list[str] = []
        self._new_folders = []
        for folder, changed_since in listed:
            if folder in self._stamps:
                self._list(folder, since, paths, changed_since)
        folders = sorted(set(self._new_folders))
        return Candidates(sorted(set(paths)), folders, len(self._stamps), len(listed))

    # -- walking ------------------------------------------------------------------------

    def _full(self, folder: str) -> str:
        return f"{self.root}/{folder}" if folder else str(self.root)

    def _stamp(self, folder: str) -> Stamp | None:
        try:
            st = os.lstat(self._full(folder)) if folder else self.root.stat()
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    def _drop(self, gone: set[str]) -> None:
        """Forget the folders in `gone` and everything below them (one pass)."""

        def below(name: str) -> bool:
            while name:
                if name in gone:
                    return True
                name = name.rpartition("/")[0]
            return False

        self._stamps = {n: s for n, s in self._stamps.items() if not below(n)}
        self._racy = {n for n in self._racy if not below(n)}

    def _walk(self, top: str, since: int, paths: list[str]) -> None:
        pending = [top]
        while pending:
            pending.extend(self._list(pending.pop(), since, paths))

    def _list(
        self, folder: str, since: int, paths: list[str], changed_since: int | None = None
    ) -> list[str]:
        """Stamp `folder` then list it. Walking (`changed_since` None): its new subfolders
        are returned. Listing a stamped folder again: its names whose inode changed since
        `changed_since` go to `paths`, its new subfolders too, walked here."""
        full = self._full(folder)
        try:
            st = os.lstat(full) if folder else self.root.stat()
            if not stat.S_ISDIR(st.st_mode) or st.st_dev != self._dev or full in NEVER_WALKED:
                raise NotADirectoryError(full)
            with os.scandir(full) as listing:
                entries = list(listing)
        except OSError:
            self._drop({folder})
            return []
        self._stamps[folder] = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        if max(st.st_mtime_ns, st.st_ctime_ns) >= since:
            self._racy.add(folder)
        else:
            self._racy.discard(folder)
        prefix = f"{folder}/" if folder else ""
        new: list[str] = []
        tracked = self._tracked if folder in self._tracked_folders else None
        for entry in entries:
            name = entry.name
            if name == ".git":
                if folder:  # a nested repository (or submodule): one entry to git
                    return self._nested(folder, paths, new, changed_since is not None)
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    rel = prefix + name
                    if rel not in self._stamps:
                        new.append(rel)
                    if (
                        tracked is not None
                        and rel not in self._tracked_folders
                        and rel not in tracked  # (a tracked one is a submodule)
                    ):
                        self._new_folders.append(rel)
                elif tracked is not None:
                    if prefix + name not in tracked:
                        paths.append(prefix + name)
                elif (
                    changed_since is not None
                    and entry.stat(follow_symlinks=False).st_ctime_ns >= changed_since
                ):
                    paths.append(prefix + name)
            except OSError:
                if changed_since is not None:
                    paths.append(prefix + name)
        if self.kept_out:
            new = [rel for rel in new if not self._is_kept_out(rel)]
            if changed_since is not None:
                paths[:] = [rel for rel in paths if not self._is_kept_out(rel)]
        if changed_since is None:
            return new
        for rel in new:
            self._new_folders.append(rel)
            self._walk(rel, since, [])
        return []

    def _nested(self, folder: str, paths: list[str], new: list[str], listing: bool) -> list[str]:
        inside = {n for n in self._stamps if n.startswith(folder + "/")}
        if inside:
            self._drop(inside)
        new.clear()
        paths[:] = [p for p in paths if not p.startswith(folder + "/")]
        if listing:  # (a first walk: a candidate already, as a folder holding no tracked path)
            self._new_folders.append(folder)
        return []

    def _is_kept_out(self, rel: str) -> bool:
        return any(rel == k or rel.startswith(k + "/") for k in self.kept_out)
