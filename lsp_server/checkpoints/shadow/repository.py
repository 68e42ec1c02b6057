"""A shadow git repository whose work tree is a workspace root (blocking; call in a thread).

git runs isolated from the user's repository (isolated_git.py); the workspace's .gitignore
files and its .git/info/exclude decide what is ignored.

A snapshot is `git add -A` + `git write-tree`: the index's stat cache makes it cost what
changed. Files over `max_file_bytes` are kept out, a pointer blob in their place
(large_files.py). toolhost's own folders (state, config) inside a root are never in a
snapshot (info/exclude names them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from lsp_server.checkpoints.shadow import changed_paths, objects, seed
from lsp_server.checkpoints.shadow.folder_stamps import FolderStamps
from lsp_server.checkpoints.shadow.index_summary import IndexSummary
from lsp_server.checkpoints.shadow.isolated_git import IsolatedGit, ShadowError
from lsp_server.checkpoints.shadow.large_files import LargeFiles
from lsp_server.checkpoints.shadow.tree_changes import (
    TreeCache,
    TreeChange,
    diff_loose,
    parse_raw_diff,
)
from lsp_server.config.broad_roots import (
    exclude_lines,
    mounts_inside,
    own_folders_inside,
    regenerable_lines,
)
from lsp_server.core.diffs import merge_lines

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_LAST_SNAPSHOT = "toolhost-last-snapshot"
"""The index's signature and tree after the last whole snapshot, whichever process took it."""


class ShadowRepo:
    def __init__(
        self, folder: Path, work_tree: Path, max_file_bytes: int, keep_out: Sequence[Path] = ()
    ) -> None:
        self.folder = folder
        self.keep_out = tuple(keep_out)
        """toolhost's own folders; those inside the work tree (relative) are never recorded."""
        self.regenerable: tuple[str, ...] = ()
        """Folder names never recorded, ignored or not: set where a walk measures the root,
        which leaves them uncounted (command_snapshots.py's `regenerable`)."""
        self.kept_out = own_folders_inside(work_tree, self.keep_out)
        self.git = IsolatedGit(folder, work_tree)
        self.git_dir = self.git.git_dir
        self.index = self.git.index
        self.work_tree = work_tree
        self.max_file_bytes = max_file_bytes
        self.large = LargeFiles(self.git, max_file_bytes)
        self._last: tuple[tuple[int, int, int], str] | None = None  # (index stat, tree)
        self._last_diff: tuple[str, str, list[TreeChange]] | None = None
        self.trees = TreeCache(self.git_dir)
        self.trees.fallback = lambda oid: self.git.run("cat-file", "tree", oid)
        """Trees read in-process (diffs, changed_paths.py), kept after gc packs them."""
        self.seeding = True
        """Seed a new index from the user's repository (seed.py) where that applies."""
        self._seed_base: str | None = None
        self.stamps: FolderStamps | None = None
        self.seed_summary: IndexSummary | None = None
        """What the index just seeded holds (its tracked paths), until the first scan."""
        self.seed_key: tuple[int, int, int] | None = None
        """Which of the user's index files it was seeded from (seed.py)."""
        self.prepared: object = None
        """A first walk made before the first snapshot (scans.py's Prepared)."""
        """The folders' stamps of the last snapshot of a root no watcher watches."""

    def anew(self) -> ShadowRepo:
        """A repository of the same folder and settings, as a fresh start finds it."""
        fresh = ShadowRepo(self.folder, self.work_tree, self.max_file_bytes, self.keep_out)
        fresh.regenerable = self.regenerable
        return fresh

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One writer at a time across processes (the server and `toolhost revert`)."""
        with self.git.locked():
            yield

    def ensure(self) -> None:
        self.git.init()
        self.find_kept_out()
        self._copy_user_excludes()

    def find_kept_out(self) -> None:
        """Other file systems mounted inside the root are never walked (git would enter
        /proc bound there, a network share ...): kept out with toolhost's own folders.
        (Reads only: no lock needed.)"""
        self.kept_out = [
            *own_folders_inside(self.work_tree, self.keep_out),
            *mounts_inside(self.work_tree),
        ]

    def exists(self) -> bool:
        return self.git.exists()

    def erase(self) -> None:
        """Remove the repository, its index and its large files' list (a fresh start)."""
        for name in ("git", "index", "large.json"):
            target = self.folder / name
            if target.is_dir():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)

    def _copy_user_excludes(self) -> None:
        """The user's info/exclude (read only), toolhost's own folders and the regenerable
        folders (`regenerable`) are ignored."""
        user = self.work_tree / ".git" / "info" / "exclude"
        try:
            text = user.read_text("utf-8", "replace") if user.is_file() else ""
        except OSError:
            text = ""
        if text and not text.endswith("\n"):
            text += "\n"
        text += exclude_lines(self.kept_out) + regenerable_lines(self.regenerable)
        target = self.git_dir / "info" / "exclude"
        if not target.exists() or target.read_text("utf-8", "replace") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            self._last = None  # what is ignored changed: the next snapshot scans it all

    # -- snapshots ---------------------------------------------------------------------

    def seed(self) -> bool:
        """Seed the index from the user's (seed.py) when there is none yet; True if seeded.
        Call before the ignored files are looked for: the seeded index says what is tracked."""
        if not self.seeding or self.index.exists():
            return False
        seeded = seed.seed(self.git)
        if seeded is None:
            return False
        self._seed_base, self.seed_summary, self.seed_key = seeded
        return True

    def seeded(self) -> bool:
        """Objects are borrowed from the user's store (seed.py)."""
        return seed.is_seeded(self.git)

    def reset_index(self) -> None:
        """Drop the index (and the seed): the next snapshot starts it afresh (a seeded one
        whose borrowed objects the user's gc removed)."""
        seed.unseed(self.git)
        self.seed_summary = self.prepared = self.stamps = None
        self.large.forget()
        self._last = None
        self._last_diff = None

    def snapshot(self) -> str:
        """The tree of every file git would see in the work tree now."""
        self.add_all()
        return self._write_snapshot()

    def add_all(self) -> None:
        """`snapshot` without writing the tree (`write_snapshot` does)."""
        self.large.refresh()
        # --ignore-errors: an unreadable file or an embedded repository without commits
        # must not stop the rest from being recorded.
        self.git.run("add", "-A", "--ignore-errors", "--", ".", ok=(0, 1))

    def write_snapshot(self) -> str:
        """The tree of the index as it is (after `add_all` and what else was added)."""
        return self._write_snapshot()

    def add_tracked(self) -> None:
        """The tracked files as they are now (`git add -u`: their stat against the index)."""
        self.large.refresh()
        # `keep`: an index without git's untracked cache (a seeded copy of the user's) is
        # not given one here: adding it makes `add -u` write the whole index even when
        # nothing changed (0.1 s at 200,000 files), and `add -u` never walks for new names.
        self.git.run("-c", "core.untrackedCache=keep", "add", "-u", "--ignore-errors", ok=(0, 1))

    def add_paths(self, paths: Sequence[str]) -> None:
        """`git add -A` of `paths` only (a folder: all below it), ignore rules applied."""
        if paths:
            names = "".join(f"{p}\0" for p in paths).encode("utf-8", "surrogateescape")
            self.git.run(
                "--literal-pathspecs", "add", "-A", "--ignore-errors",
                "--pathspec-from-file=-", "--pathspec-file-nul", data=names, ok=(0, 1),
            )  # fmt: skip

    def _write_snapshot(self) -> str:
        signature = self._index_signature()
        if self._last is not None and self._last[0] == signature:
            return self._last[1]
        tree = self.git.run("write-tree").decode().strip()
        if self._last is not None:
            previous = self._last[1]
        else:  # a seeded index is compared with the user's: only what differs is new
            previous, self._seed_base = self._seed_base or self._base_left(), None
        changes = self.diff(previous, tree)
        if self.large.keep_out(changes):
            tree = self.git.run("write-tree").decode().strip()
            changes = self.diff(previous, tree)
        self._last = (self._index_signature(), tree)
        self._last_diff = (previous, tree, changes)
        self._tell_others(self._last)
        return tree

    def current(self) -> str | None:
        """The tree of the last snapshot while the index is still as it left it, or as
        another process's snapshot left it since (each is whole, and written under the
        repository's lock after ours: what did not change since ours is as it holds it):
        the base an incremental snapshot may add to."""
        if self._last is None:
            return None
        signature = self._index_signature()
        if self._last[0] != signature:
            theirs = self._others_last()
            if theirs is None or theirs[0] != signature:
                return None  # written by no whole snapshot: a crash, a reset, a seed
            self._last = theirs
        return self._last[1]

    def void_last(self) -> None:
        """The index holds no whole snapshot now: no process may add to it."""
        with contextlib.suppress(OSError):
            (self.git_dir / _LAST_SNAPSHOT).unlink()

    def _tell_others(self, last: tuple[tuple[int, int, int], str]) -> None:
        """Leave what the index holds for the other processes sharing this repository."""
        target = self.git_dir / _LAST_SNAPSHOT
        staged = target.with_name(f"{_LAST_SNAPSHOT}.{os.getpid()}")
        with contextlib.suppress(OSError):
            staged.write_text(" ".join(map(str, (*last[0], last[1]))))
            staged.replace(target)

    def _base_left(self) -> str:
        """What this process's first snapshot of an index it did not make is compared
        with: the last whole snapshot of it (another process's, whose large files were kept
        out then), else the empty tree (every file is looked at)."""
        theirs = self._others_last()
        if theirs is None:
            return EMPTY_TREE
        try:  # (a tree the bounds have dropped since: every file is looked at)
            self.git.run("cat-file", "-e", f"{theirs[1]}^{{tree}}")
        except ShadowError:
            return EMPTY_TREE
        return theirs[1]

    def _others_last(self) -> tuple[tuple[int, int, int], str] | None:
        try:
            mtime, size, inode, tree = (self.git_dir / _LAST_SNAPSHOT).read_text().split()
            return (int(mtime), int(size), int(inode)), tree
        except (OSError, ValueError):
            return None

    def snapshot_paths(self, paths: Iterable[str]) -> str:
        """Like `snapshot`, looking only at `paths` (a folder: all below it); every other
        file must be as the last snapshot saw it (`current` is not None)."""
        assert self._last is not None
        self.large.refresh()
        changed_paths.add(self.git, self.trees, paths, self._last[1], set(self.large.load()))
        return self._write_snapshot()

    def _index_signature(self) -> tuple[int, int, int]:
        try:
            st = self.index.stat()
        except FileNotFoundError:
            return (0, 0, 0)
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    # -- reading -------------------------------------------------------------------------

    def diff(self, old_tree: str, new_tree: str) -> list[TreeChange]:
        if old_tree == new_tree:
            return []
        if self._last_diff is not None and self._last_diff[:2] == (old_tree, new_tree):
            return self._last_diff[2]  # the snapshot just computed it
        in_process = diff_loose(self.trees, old_tree, new_tree)
        if in_process is not None:
            return in_process
        raw = self.git.run(
            "diff-tree", "-r", "-z", "-M", "--raw", "--no-commit-id", old_tree, new_tree
        )
        return parse_raw_diff(raw)

    def read_blobs(self, oids: Iterable[str]) -> dict[str, bytes]:
        wanted = sorted(set(oids))
        if not wanted:
            return {}
        out = self.git.run("cat-file", "--batch", data="".join(f"{o}\n" for o in wanted).encode())
        blobs: dict[str, bytes] = {}
        offset = 0
        while offset < len(out):
            end = out.index(b"\n", offset)
            header = out[offset:end].split()
            offset = end + 1
            if len(header) < 3:  # "<oid> missing"
                continue
            size = int(header[2])
            blobs[header[0].decode()] = out[offset : offset + size]
            offset += size + 1
        return blobs

    def merge(self, current: bytes, base: bytes, other: bytes) -> bytes | None:
        """git merge-file: `current` with the change base -> other applied, or None when
        that change overlaps changes made to `current`."""
        folder = self.folder / "tmp"
        folder.mkdir(parents=True, exist_ok=True)
        names = []
        for label, data in (("current", current), ("base", base), ("other", other)):
            path = folder / f"{label}-{os.getpid()}"
            path.write_bytes(data)
            names.append(str(path))
        try:
            done = subprocess.run(
                ["git", "merge-file", "-p", "--quiet", *names],
                capture_output=True,
                env=self.git.environment(),
                cwd=folder,
                check=False,
            )
        finally:
            for name in names:
                Path(name).unlink(missing_ok=True)
        if done.returncode == 0:
            return done.stdout
        # git merge-file counts changes on neighbouring lines as a conflict; they are not.
        texts = [data.decode("utf-8", "surrogateescape") for data in (current, base, other)]
        merged = merge_lines(*texts)
        return None if merged is None else merged.encode("utf-8", "surrogateescape")

    # -- keeping and dropping ------------------------------------------------------------

    def keep(self, name: str, oids: dict[str, int]) -> None:
        """A ref that keeps `oids` (oid -> mode) alive through gc, in the shadow's own store
        (copied from the user's where a seeded index borrowed them: seed.py)."""
        seed.own_objects(self.git, oids, self.max_file_bytes)
        entries = {oid: (mode, oid) for oid, mode in oids.items()}
        self.keep_tree(name, objects.write_flat_tree(self.git_dir, entries))

    def keep_tree(self, name: str, tree: str) -> None:
        """A ref to a stored tree (`keep` with the tree written by the caller)."""
        ref = self.git_dir / "refs" / "checkpoints" / name
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(tree + "\n")

    def kept(self, prefix: str) -> list[str]:
        """The names of the refs `keep` or `keep_tree` made that start with `prefix`."""
        return [ref.name for ref in (self.git_dir / "refs" / "checkpoints").glob(f"{prefix}*")]

    def drop(self, name: str) -> None:
        (self.git_dir / "refs" / "checkpoints" / name).unlink(missing_ok=True)

    def object_counts(self) -> dict[str, int]:
        """git count-objects -v: count (loose objects), size, size-pack ... (KiB)."""
        text = self.git.run("count-objects", "-v").decode()
        pairs = (line.split(": ", 1) for line in text.splitlines() if ": " in line)
        return {key: int(value) for key, value in pairs if value.strip().isdigit()}

    def size_bytes(self) -> int:
        """Bytes of objects on disk (loose and packed)."""
        return size_of(self.object_counts())

    def prune(self) -> None:
        """Repack what refs and the index still reach; everything else goes now."""
        self.git.run("gc", "--quiet", "--prune=now")


def size_of(counts: dict[str, int]) -> int:
    """The bytes of objects on disk that `ShadowRepo.object_counts` gave (loose, packed,
    garbage)."""
    kib = counts.get("size", 0) + counts.get("size-pack", 0) + counts.get("size-garbage", 0)
    return kib * 1024
