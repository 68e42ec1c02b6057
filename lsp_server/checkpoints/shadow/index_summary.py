"""What a user's git index says of the work tree, read in-process (blocking; read only).

The index holds a line for every tracked file with its size from the last stat, so the
first snapshot of a git work tree measures the root from it (watching/root_budget.py) and learns
whether seeding must clear flags or can meet a filter (seed.py) without a walk of the tree
or a git process. Index versions 2-4 with SHA-1 ids; a split index (its entries partly in
a shared file) or anything unexpected gives None, and the callers walk as before.
"""

from __future__ import annotations

import os
import struct
from itertools import repeat
from operator import itemgetter
from pathlib import Path

import attrs

_HEADER = struct.Struct(">4sII")
_MODE_SIZE_AND_FLAGS = struct.Struct(">I8xI20xH")  # mode, (uid, gid), size, (the id), flags
_GITLINK = 0o160000
_TYPE = 0o170000
_FIXED = 62  # ctime, mtime, dev, ino, mode, uid, gid, size, oid, flags
_ASSUME_VALID = 0x8000
_EXTENDED = 0x4000
_STAGE = 0x3000
_NAME_MASK = 0x0FFF

MAX_INDEX_BYTES = 256 << 20
"""A larger index (2,500,000 entries and more: far over any root's file budget) is left to
git. Read whole here it would hold that much of the server's memory, and whoever can
write .git/index (a shell command can) chooses its size."""
_NAMES_PER_INDEX_BYTE = 8
"""Index v4 writes each name as a cut of the previous one plus a suffix, so its names may
total more than the file: git's run to two or three times its size. Past this many times
(or MAX_INDEX_BYTES) the file is given up: names that each repeat a long previous one grow
with the square of the entries."""


@attrs.frozen(eq=False)
class IndexSummary:
    files: int
    """Tracked paths (stage 0 entries, and each unmerged path once)."""
    bytes: int
    """Their sizes as last seen by git."""
    folders: int
    """Folders holding tracked files (the root and every parent of one)."""
    flagged: bool
    """Some entry is marked assume-unchanged, skip-worktree or intent-to-add."""
    unmerged: bool
    attributes: tuple[str, ...]
    """Tracked .gitattributes files."""
    tracked: frozenset[str] = frozenset()
    """Every tracked path (a first snapshot seeded from this index looks for the others)."""
    tracked_folders: frozenset[str] = frozenset()
    """The root ("") and every folder holding a tracked path."""
    gitlinks: tuple[str, ...] = ()
    """Submodules (folders the index holds as one entry)."""


def _varint(data: bytes, offset: int) -> tuple[int, int]:
    """git's offset varint (index v4 path prefixes): (value, next offset)."""
    byte = data[offset]
    offset += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[offset]
        offset += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, offset


def read_summary(index: Path) -> IndexSummary | None:
    """The summary of the index file at `index`, or None when it cannot be read here."""
    try:
        with index.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > MAX_INDEX_BYTES:
                return None
            data = file.read(size)  # (written meanwhile: the caller's key check says)
    except OSError:
        return None
    try:
        return _summary(data)
    except (struct.error, IndexError, ValueError):
        return None


def _summary(data: bytes) -> IndexSummary | None:
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3, 4):
        return None
    offset = 12
    total = 0
    any_flags = 0
    unmerged = False
    names: list[bytes] = []
    gitlinks: list[bytes] = []
    previous = b""
    end = len(data) - 20
    unpack = _MODE_SIZE_AND_FLAGS.unpack_from
    find = data.find
    append = names.append
    spelled = 0  # v4: the bytes of the names built so far
    most = min(_NAMES_PER_INDEX_BYTE * len(data), MAX_INDEX_BYTES)
    for _ in range(count):  # only what each entry needs; the names are handled in bulk
        mode, size, flags = unpack(data, offset + 24)
        start = offset + _FIXED
        if flags & _EXTENDED:
            if version < 3:
                return None
            any_flags |= int.from_bytes(data[start : start + 2], "big") & 0x6000
            start += 2
        if version == 4:
            strip, start = _varint(data, start)
            stop = find(b"\0", start)
            name = previous[: len(previous) - strip] + data[start:stop]
            previous = name
            offset = stop + 1
            spelled += len(name)
            if spelled > most:
                return None
        else:
            length = flags & _NAME_MASK  # the name's length, unless it is that long or more
            stop = start + length if length < _NAME_MASK else find(b"\0", start)
            name = data[start:stop]
            offset += (stop - offset + 8) & ~7
        if stop < 0 or offset > end:
            return None
        any_flags |= flags & _ASSUME_VALID
        if flags & _STAGE:
            unmerged = True
            if names and names[-1] == name:
                continue
            size = 0
        total += size
        append(name)
        if mode & _TYPE == _GITLINK:
            gitlinks.append(name)
    if _links_elsewhere(data, offset, end):
        return None
    text = b"\0".join(names).decode("utf-8", "surrogateescape")
    paths = text.split("\0") if names else []
    # In C loops: a Python frame a path costs a tenth of a second on 200,000.
    parents = set(map(itemgetter(0), map(str.rpartition, paths, repeat("/"))))
    folders = {""}
    for folder in parents:
        while folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    tracked = frozenset(paths)
    return IndexSummary(
        len(tracked),
        total,
        len(folders),
        bool(any_flags),
        unmerged,
        _named(text, ".gitattributes"),
        tracked,
        frozenset(folders),
        tuple(name.decode("utf-8", "surrogateescape") for name in gitlinks),
    )


def _named(text: str, name: str) -> tuple[str, ...]:
    """The paths of the NUL-separated `text` whose last component is `name` (found by a
    search for the name: far fewer than the paths)."""
    found = []
    at = text.find(name)
    while at >= 0:
        after = at + len(name)
        if (at == 0 or text[at - 1] in "\0/") and (after == len(text) or text[after] == "\0"):
            found.append(text[text.rfind("\0", 0, at) + 1 : after])
        at = text.find(name, after)
    return tuple(found)


def _links_elsewhere(data: bytes, offset: int, end: int) -> bool:
    """A `link` extension: the index is split and most entries are in a shared file."""
    while offset + 8 <= end:
        tag = data[offset : offset + 4]
        length = int.from_bytes(data[offset + 4 : offset + 8], "big")
        if tag == b"link":
            return True
        offset += 8 + length
    return False
