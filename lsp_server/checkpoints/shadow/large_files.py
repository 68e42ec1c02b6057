"""Files over `max_file_bytes`, kept out of the shadow repository (blocking).

A snapshot stores no blob of such a file: the index holds a small pointer blob ("not
stored": its size and git blob id) marked assume-unchanged, and `large.json` remembers the
file's stat so the next snapshot sees when it changed. `pointers` lists the blobs that are
pointers, so a record can say which states cannot be restored.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Iterable
from pathlib import Path

from lsp_server.checkpoints.shadow import objects
from lsp_server.checkpoints.shadow.isolated_git import IsolatedGit
from lsp_server.checkpoints.shadow.tree_changes import TreeChange

POINTER_PREFIX = b"toolhost checkpoint: file not stored"


def pointer_blob(size: int, oid: str) -> bytes:
    return POINTER_PREFIX + f" (over the size limit)\nsize {size}\ngit-blob {oid}\n".encode()


def is_pointer(data: bytes) -> bool:
    return data.startswith(POINTER_PREFIX)


def large_identity(path: Path) -> tuple[int, str]:
    """Size and git blob id of a file, read in chunks (it is over the size limit)."""
    size = path.stat().st_size
    digest = hashlib.sha1(f"blob {size}\0".encode(), usedforsecurity=False)
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return size, digest.hexdigest()


def pointer_of(path: Path) -> bytes:
    """The pointer the shadow repository keeps for a file over the size limit."""
    return pointer_blob(*large_identity(path))


class LargeFiles:
    """The work tree's files over the size limit, and the pointers that stand for them."""

    def __init__(self, git: IsolatedGit, max_file_bytes: int) -> None:
        self.git = git
        self.max_file_bytes = max_file_bytes
        self._large_file = git.folder / "large.json"
        self._pointers = git.folder / "pointers"

    def keep_out(self, changes: Iterable[TreeChange]) -> bool:
        """Swap blobs of files over the limit for pointers; False when there were none."""
        large: dict[str, list[int | str]] = {}
        for change in changes:
            if change.new is None or change.new.is_gitlink:
                continue
            try:
                st = (self.git.work_tree / change.path).lstat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > self.max_file_bytes:
                large[change.path] = [st.st_size, st.st_mtime_ns, st.st_ino, change.new.oid]
        if not large:
            return False
        known = self.load()
        known.update(large)
        self._point_at(large)
        for _, _, _, oid in large.values():
            # Not referenced by anything now: its bytes need not wait for the next prune.
            objects.loose_path(self.git.git_dir, str(oid)).unlink(missing_ok=True)
        self._save(known)
        return True

    def write_pointer(self, size: int, oid: str) -> str:
        """Store the pointer blob that stands for a file over the size limit."""
        pointer = objects.write_blob(self.git.git_dir, pointer_blob(size, oid))
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
            mode = (self.git.work_tree / path).lstat().st_mode
            git_mode = "100755" if mode & 0o111 else "100644"
            lines.append(f"{git_mode} {pointer}\t{path}\0")
        self.git.run("update-index", "-z", "--index-info", data="".join(lines).encode())
        names = "".join(f"{path}\0" for path in large).encode()
        self.git.run("update-index", "-z", "--assume-unchanged", "--stdin", data=names)

    def refresh(self) -> None:
        """Files kept out earlier: removed, changed, or small again."""
        known = self.load()
        if not known:
            return
        before = dict(known)
        changed: dict[str, list[int | str]] = {}
        for path, (size, mtime, ino, _) in list(known.items()):
            try:
                st = (self.git.work_tree / path).lstat()
            except OSError:
                st = None
            if st is not None and (st.st_size, st.st_mtime_ns, st.st_ino) == (size, mtime, ino):
                continue
            del known[path]
            self.git.run("update-index", "--no-assume-unchanged", "--", path, ok=(0, 1, 128))
            if st is None or not stat.S_ISREG(st.st_mode):
                self.git.run("update-index", "--force-remove", "--", path)
            elif st.st_size > self.max_file_bytes:
                oid = self.git.run("hash-object", "--", path).decode().strip()
                changed[path] = [st.st_size, st.st_mtime_ns, st.st_ino, oid]
        if changed:
            self._point_at(changed)
            known.update(changed)
        if known != before:
            self._save(known)

    def forget(self) -> None:
        """The index was dropped: no pointer stands in it any more."""
        self._large_file.unlink(missing_ok=True)

    def load(self) -> dict[str, list[int | str]]:
        """path -> [size, mtime_ns, inode, blob id] of each file kept out."""
        try:
            data = json.loads(self._large_file.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, known: dict[str, list[int | str]]) -> None:
        self._large_file.write_text(json.dumps(known))
