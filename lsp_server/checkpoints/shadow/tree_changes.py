"""Files as a snapshot holds them, and what differs between two snapshots: git diff-tree
--raw -z -M parsed, or the same read in-process from loose tree objects when that is sure
to give git's answer (`diff_loose`: a snapshot's new trees are loose, so a small change
needs no git process)."""

from __future__ import annotations

import stat
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

GITLINK_MODE = 0o160000


@attrs.frozen
class Entry:
    """A file as a snapshot holds it."""

    oid: str
    mode: int

    @property
    def is_gitlink(self) -> bool:
        return self.mode == GITLINK_MODE


@attrs.frozen
class TreeChange:
    """One path that differs between two snapshots (git diff-tree --raw -M)."""

    status: str  # A, D, M, T or R
    path: str
    old: Entry | None
    new: Entry | None
    source: str | None = None  # the old path of a rename


def parse_raw_diff(raw: bytes) -> list[TreeChange]:
    fields = raw.split(b"\0")
    changes: list[TreeChange] = []
    index = 0
    while index < len(fields) and fields[index]:
        meta = fields[index].decode().lstrip(":").split()
        old_mode, new_mode, old_oid, new_oid, status = meta
        kind = status[0]
        first = fields[index + 1].decode("utf-8", "surrogateescape")
        index += 2
        source = None
        path = first
        if kind in "RC":
            source, path = first, fields[index].decode("utf-8", "surrogateescape")
            index += 1
        old = None if kind == "A" else Entry(old_oid, int(old_mode, 8))
        new = None if kind == "D" else Entry(new_oid, int(new_mode, 8))
        if kind == "C":  # a copy is a plain creation of the new path
            changes.append(TreeChange("A", path, None, new))
            continue
        changes.append(TreeChange(kind, path, old, new, source))
    return changes


TREE_MODE = 0o040000
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
Tree = dict[bytes, tuple[int, str]]  # name -> (mode, oid)


class NotLoose(Exception):
    """A tree the in-process diff needs is packed (or missing): git must diff."""


class TreeCache:
    """Trees read from loose objects, kept (up to `limit`) after gc packs them: the trees
    of the last snapshot stay readable for the next diff without a git process."""

    def __init__(self, git_dir: Path, limit: int = 20_000) -> None:
        self.git_dir = git_dir
        self.limit = limit
        self._trees: dict[str, Tree] = {EMPTY_TREE: {}}
        self.fallback: Callable[[str], bytes] | None = None
        """Reads a tree git has packed or borrows (`git cat-file tree`): `read_any`."""

    def read(self, oid: str) -> Tree:
        tree = self._trees.get(oid)
        if tree is None:
            tree = self._keep(oid, _read_loose_tree(self.git_dir, oid))
        return tree

    def read_any(self, oid: str) -> Tree:
        """`read`, or through `fallback` (a git process) when the tree is not loose."""
        try:
            return self.read(oid)
        except NotLoose:
            if self.fallback is None:
                raise
            return self._keep(oid, _parse_tree(self.fallback(oid)))

    def _keep(self, oid: str, tree: Tree) -> Tree:
        self._trees[oid] = tree
        if len(self._trees) > self.limit:
            del self._trees[next(iter(self._trees))]
        return tree


def _read_loose_tree(git_dir: Path, oid: str) -> Tree:
    try:
        raw = zlib.decompress((git_dir / "objects" / oid[:2] / oid[2:]).read_bytes())
    except (OSError, zlib.error) as exc:
        raise NotLoose(oid) from exc
    header, _, body = raw.partition(b"\0")
    if not header.startswith(b"tree "):
        raise NotLoose(oid)
    return _parse_tree(body)


def _parse_tree(body: bytes) -> Tree:
    entries: Tree = {}
    offset = 0
    while offset < len(body):
        space = body.index(b" ", offset)
        nul = body.index(b"\0", space)
        mode = int(body[offset:space], 8)
        entries[body[space + 1 : nul]] = (mode, body[nul + 1 : nul + 21].hex())
        offset = nul + 21
    return entries


def _leaves(trees: TreeCache, oid: str, prefix: bytes) -> Iterator[tuple[bytes, Entry]]:
    for name, (mode, child) in trees.read(oid).items():
        if mode == TREE_MODE:
            yield from _leaves(trees, child, prefix + name + b"/")
        else:
            yield prefix + name, Entry(child, mode)


def _walk(
    trees: TreeCache, old: str, new: str, prefix: bytes, out: list[tuple[bytes, TreeChange]]
) -> None:
    before, after = trees.read(old), trees.read(new)
    for name in before.keys() | after.keys():
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        path = prefix + name
        if was is not None and now is not None and was[0] == now[0] == TREE_MODE:
            _walk(trees, was[1], now[1], path + b"/", out)
            continue
        for side, state in (("D", was), ("A", now)):
            if state is not None and state[0] == TREE_MODE:
                for leaf, entry in _leaves(trees, state[1], path + b"/"):
                    old_entry, new_entry = (entry, None) if side == "D" else (None, entry)
                    out.append((leaf, TreeChange(side, _text(leaf), old_entry, new_entry)))
        if was is not None and now is not None and TREE_MODE not in (was[0], now[0]):
            if was[0] >> 12 != now[0] >> 12:
                raise NotLoose("a type change: git names it")
            old_entry, new_entry = Entry(was[1], was[0]), Entry(now[1], now[0])
            out.append((path, TreeChange("M", _text(path), old_entry, new_entry)))
        elif was is not None and was[0] != TREE_MODE:
            out.append((path, TreeChange("D", _text(path), Entry(was[1], was[0]), None)))
        elif now is not None and now[0] != TREE_MODE:
            out.append((path, TreeChange("A", _text(path), None, Entry(now[1], now[0]))))


def _text(path: bytes) -> str:
    return path.decode("utf-8", "surrogateescape")


def diff_loose(trees: TreeCache, old_tree: str, new_tree: str) -> list[TreeChange] | None:
    """`git diff-tree -r -M` of two trees read in-process, when every tree it must read is
    loose and nothing could be a rename (no path both added and removed) or a type change;
    None when git must do it."""
    found: list[tuple[bytes, TreeChange]] = []
    try:
        _walk(trees, old_tree, new_tree, b"", found)
    except NotLoose:
        return None
    kinds = {change.status for _, change in found}
    if {"A", "D"} <= kinds:
        return None
    return [change for _, change in sorted(found, key=lambda item: item[0])]


def absent(trees: TreeCache, tree: str, path: str) -> bool:
    """True only when `tree` surely holds nothing at `path` (its trees read, through git
    where they are not loose: TreeCache.read_any)."""
    oid = tree
    for name in path.encode("utf-8", "surrogateescape").split(b"/"):
        try:
            found = trees.read_any(oid).get(name)
        except (NotLoose, OSError, ValueError):
            return False
        if found is None:
            return True
        mode, oid = found
        if mode != TREE_MODE:
            return False  # a file (or a link, a repository) here or on the way
    return False


def tracked_file(trees: TreeCache, tree: str, path: str) -> bool:
    """True when `tree` holds `path` as a file or symlink (not a folder, not a nested
    repository); False when it does not, or when a tree on the way is not at hand."""
    parts = path.encode("utf-8", "surrogateescape").split(b"/")
    oid = tree
    try:
        for n, name in enumerate(parts):
            found = trees.read(oid).get(name)
            if found is None:
                return False
            mode, oid = found
            if n < len(parts) - 1 and mode != TREE_MODE:
                return False
    except NotLoose:
        return False
    return stat.S_IFMT(mode) in (stat.S_IFREG, stat.S_IFLNK)
