"""A shadow git repository whose work tree is a workspace root (blocking; call in a thread).

git runs with its own GIT_DIR, GIT_INDEX_FILE and GIT_WORK_TREE, no system or global
configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null, HOME inside the shadow
folder) and hooks switched off, so the user's repository (its HEAD, index, refs, hooks and
config) is never read for state nor written. git itself skips every `.git` entry of the work
tree; the workspace's .gitignore files and its .git/info/exclude decide what is ignored.

A snapshot is `git add -A` + `git write-tree`: the index's stat cache makes it cost what
changed. Files over `max_file_bytes` are kept out: the index holds a small pointer blob
("not stored") marked assume-unchanged; `large.json` remembers their stat. toolhost's own
folders (state, config) inside a root are never in a snapshot (info/exclude names them).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from lsp_server.checkpoints.shadow import changed_paths, objects
from lsp_server.checkpoints.shadow.tree_changes import (
    TreeCache,
    TreeChange,
    diff_loose,
    parse_raw_diff,
)
from lsp_server.config.broad_roots import exclude_lines, own_folders_inside

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
POINTER_PREFIX = b"toolhost checkpoint: file not stored"

# fsync = none: a checkpoint lost to a power cut is not worth an fsync per object (100
# changed files took a second with git's default here).
# splitIndex: a snapshot of a few files writes a small index beside a shared one instead of
# the whole index of a large tree, and write-tree reads less (docs/BENCHMARKS.md, target 5);
# the shared index replaced by a new one goes at once (every git run here holds the lock).
_CONFIG = """\
[core]
\trepositoryformatversion = 0
\tbare = false
\thooksPath = /dev/null
\tuntrackedCache = true
\tautocrlf = false
\tsafecrlf = false
\tfilemode = true
\tsymlinks = true
\tquotePath = false
\tfsmonitor = false
\tlogAllRefUpdates = false
\tlooseCompression = 1
\tfsync = none
\tsplitIndex = true
[splitIndex]
\tsharedIndexExpire = now
[gc]
\tauto = 0
\tpackRefs = false
\treflogExpire = now
[maintenance]
\tauto = false
[index]
\tversion = 4
[advice]
\taddEmbeddedRepo = false
\taddIgnoredFile = false
[user]
\tname = toolhost
\temail = toolhost@localhost
"""


class ShadowError(Exception):
    """git failed in the shadow repository (the message is git's)."""


def pointer_blob(size: int, oid: str) -> bytes:
    return POINTER_PREFIX + f" (over the size limit)\nsize {size}\ngit-blob {oid}\n".encode()


class ShadowRepo:
    def __init__(
        self, folder: Path, work_tree: Path, max_file_bytes: int, keep_out: Sequence[Path] = ()
    ) -> None:
        self.folder = folder
        self.keep_out = tuple(keep_out)
        """toolhost's own folders; those inside the work tree (relative) are never recorded."""
        self.kept_out = own_folders_inside(work_tree, self.keep_out)
        self.git_dir = folder / "git"
        self.index = folder / "index"
        self.work_tree = work_tree
        self.max_file_bytes = max_file_bytes
        self._large_file = folder / "large.json"
        self._pointers = folder / "pointers"
        self._last: tuple[tuple[int, int, int], str] | None = None  # (index stat, tree)
        self._last_diff: tuple[str, str, list[TreeChange]] | None = None
        self.trees = TreeCache(self.git_dir)
        """Trees read in-process (diffs, changed_paths.py), kept after gc packs them."""

    # -- plumbing ---------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(self.work_tree),
            GIT_INDEX_FILE=str(self.index),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            HOME=str(self.folder),
            XDG_CONFIG_HOME=str(self.folder),
            LC_ALL="C",
        )
        return env

    def git(self, *args: str, data: bytes | None = None, ok: Sequence[int] = (0,)) -> bytes:
        command = ["git", "-c", "core.hooksPath=/dev/null", *args]
        done = subprocess.run(
            command,
            input=data,
            capture_output=True,
            env=self.environment(),
            cwd=self.work_tree,
            check=False,
        )
        if done.returncode not in ok:
            message = done.stderr.decode("utf-8", "replace").strip()
            raise ShadowError(f"git {args[0]} failed ({done.returncode}): {message}")
        return done.stdout

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One writer at a time across processes (the server and `toolhost revert`)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / "lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def ensure(self) -> None:
        if not (self.git_dir / "HEAD").exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(
                ["git", "init", "--quiet", "--template=", str(self.git_dir)],
                env={**self.environment(), "GIT_WORK_TREE": str(self.folder)},
                check=False,
                capture_output=True,
                cwd=self.folder,
            )
            if done.returncode != 0:
                raise ShadowError(f"git init failed: {done.stderr.decode(errors='replace')}")
        config = self.git_dir / "config"
        if config.read_text() != _CONFIG:
            config.write_text(_CONFIG)
        self._copy_user_excludes()

    def _copy_user_excludes(self) -> None:
        """The user's info/exclude (read only) and toolhost's own folders are ignored."""
        user = self.work_tree / ".git" / "info" / "exclude"
        try:
            text = user.read_text("utf-8", "replace") if user.is_file() else ""
        except OSError:
            text = ""
        if self.kept_out and text and not text.endswith("\n"):
            text += "\n"
        text += exclude_lines(self.kept_out)
        target = self.git_dir / "info" / "exclude"
        if not target.exists() or target.read_text("utf-8", "replace") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            self._last = None  # what is ignored changed: the next snapshot scans it all

    # -- snapshots ---------------------------------------------------------------------

    def snapshot(self) -> str:
        """The tree of every file git would see in the work tree now."""
        self._refresh_large()
        # --ignore-errors: an unreadable file or an embedded repository without commits
        # must not stop the rest from being recorded.
        self.git("add", "-A", "--ignore-errors", "--", ".", ok=(0, 1))
        return self._write_snapshot()

    def _write_snapshot(self) -> str:
        signature = self._index_signature()
        if self._last is not None and self._last[0] == signature:
            return self._last[1]
        tree = self.git("write-tree").decode().strip()
        previous = self._last[1] if self._last is not None else EMPTY_TREE
        changes = self.diff(previous, tree)
        if self._keep_out_large(changes):
            tree = self.git("write-tree").decode().strip()
            changes = self.diff(previous, tree)
        self._last = (self._index_signature(), tree)
        self._last_diff = (previous, tree, changes)
        return tree

    def current(self) -> str | None:
        """The tree of the last snapshot while the index is still as it left it (nothing
        else wrote it since): the base an incremental snapshot may add to."""
        if self._last is None or self._last[0] != self._index_signature():
            return None
        return self._last[1]

    def snapshot_paths(self, paths: Iterable[str]) -> str:
        """Like `snapshot`, looking only at `paths` (a folder: all below it); every other
        file must be as the last snapshot saw it (`current` is not None)."""
        assert self._last is not None
        self._refresh_large()
        changed_paths.add(self, paths, self._last[1], set(self.load_large()))
        return self._write_snapshot()

    def _index_signature(self) -> tuple[int, int, int]:
        try:
            st = self.index.stat()
        except FileNotFoundError:
            return (0, 0, 0)
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _keep_out_large(self, changes: Iterable[TreeChange]) -> bool:
        """Swap blobs of files over the limit for pointers; False when there were none."""
        large: dict[str, list[int | str]] = {}
        for change in changes:
            if change.new is None or change.new.is_gitlink:
                continue
            try:
                st = (self.work_tree / change.path).lstat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > self.max_file_bytes:
                large[change.path] = [st.st_size, st.st_mtime_ns, st.st_ino, change.new.oid]
        if not large:
            return False
        known = self.load_large()
        known.update(large)
        self._point_at(large)
        for _, _, _, oid in large.values():
            # Not referenced by anything now: its bytes need not wait for the next prune.
            objects.loose_path(self.git_dir, str(oid)).unlink(missing_ok=True)
        self._save_large(known)
        return True

    def write_pointer(self, size: int, oid: str) -> str:
        """Store the pointer blob that stands for a file over the size limit."""
        pointer = objects.write_blob(self.git_dir, pointer_blob(size, oid))
        self.remember_pointers([pointer])
        return pointer

    def remember_pointers(self, oids: Iterable[str]) -> None:
        """Note that these blobs are pointers (`pointer_blob`), stored or about to be."""
        with self._pointers.open("a") as handle:
            handle.write("".join(f"{oid}\n" for oid in oids))

    def pointer_oids(self) -> set[str]:
        try:
            return set(self._pointers.read_text().split())
        except OSError:
            return set()

    def _point_at(self, large: dict[str, list[int | str]]) -> None:
        lines = []
        for path, (size, _, _, oid) in large.items():
            pointer = self.write_pointer(int(size), str(oid))
            mode = (self.work_tree / path).lstat().st_mode
            git_mode = "100755" if mode & 0o111 else "100644"
            lines.append(f"{git_mode} {pointer}\t{path}\0")
        self.git("update-index", "-z", "--index-info", data="".join(lines).encode())
        names = "".join(f"{path}\0" for path in large).encode()
        self.git("update-index", "-z", "--assume-unchanged", "--stdin", data=names)

    def _refresh_large(self) -> None:
        """Files kept out earlier: removed, changed, or small again."""
        known = self.load_large()
        if not known:
            return
        before = dict(known)
        changed: dict[str, list[int | str]] = {}
        for path, (size, mtime, ino, _) in list(known.items()):
            try:
                st = (self.work_tree / path).lstat()
            except OSError:
                st = None
            if st is not None and (st.st_size, st.st_mtime_ns, st.st_ino) == (size, mtime, ino):
                continue
            del known[path]
            self.git("update-index", "--no-assume-unchanged", "--", path, ok=(0, 1, 128))
            if st is None or not stat.S_ISREG(st.st_mode):
                self.git("update-index", "--force-remove", "--", path)
            elif st.st_size > self.max_file_bytes:
                oid = self.git("hash-object", "--", path).decode().strip()
                changed[path] = [st.st_size, st.st_mtime_ns, st.st_ino, oid]
        if changed:
            self._point_at(changed)
            known.update(changed)
        if known != before:
            self._save_large(known)

    def load_large(self) -> dict[str, list[int | str]]:
        try:
            data = json.loads(self._large_file.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save_large(self, known: dict[str, list[int | str]]) -> None:
        self._large_file.write_text(json.dumps(known))

    # -- reading -------------------------------------------------------------------------

    def diff(self, old_tree: str, new_tree: str) -> list[TreeChange]:
        if old_tree == new_tree:
            return []
        if self._last_diff is not None and self._last_diff[:2] == (old_tree, new_tree):
            return self._last_diff[2]  # the snapshot just computed it
        in_process = diff_loose(self.trees, old_tree, new_tree)
        if in_process is not None:
            return in_process
        raw = self.git("diff-tree", "-r", "-z", "-M", "--raw", "--no-commit-id", old_tree, new_tree)
        return parse_raw_diff(raw)

    def read_blobs(self, oids: Iterable[str]) -> dict[str, bytes]:
        wanted = sorted(set(oids))
        if not wanted:
            return {}
        out = self.git("cat-file", "--batch", data="".join(f"{o}\n" for o in wanted).encode())
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
                env=self.environment(),
                cwd=folder,
                check=False,
            )
        finally:
            for name in names:
                Path(name).unlink(missing_ok=True)
        return done.stdout if done.returncode == 0 else None

    # -- keeping and dropping ------------------------------------------------------------

    def keep(self, name: str, oids: dict[str, int]) -> None:
        """A ref that keeps `oids` (oid -> mode) alive through gc."""
        entries = {oid: (mode, oid) for oid, mode in oids.items()}
        self.keep_tree(name, objects.write_flat_tree(self.git_dir, entries))

    def keep_tree(self, name: str, tree: str) -> None:
        """A ref to a stored tree (`keep` with the tree written by the caller)."""
        ref = self.git_dir / "refs" / "checkpoints" / name
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(tree + "\n")

    def drop(self, name: str) -> None:
        (self.git_dir / "refs" / "checkpoints" / name).unlink(missing_ok=True)

    def object_counts(self) -> dict[str, int]:
        """git count-objects -v: count (loose objects), size, size-pack ... (KiB)."""
        text = self.git("count-objects", "-v").decode()
        pairs = (line.split(": ", 1) for line in text.splitlines() if ": " in line)
        return {key: int(value) for key, value in pairs if value.strip().isdigit()}

    def size_bytes(self) -> int:
        """Bytes of objects on disk (loose and packed)."""
        counts = self.object_counts()
        kib = counts.get("size", 0) + counts.get("size-pack", 0) + counts.get("size-garbage", 0)
        return kib * 1024

    def prune(self) -> None:
        """Repack what refs and the index still reach; everything else goes now."""
        self.git("gc", "--quiet", "--prune=now")
