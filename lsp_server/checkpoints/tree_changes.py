"""Files as a snapshot holds them, and what differs between two snapshots (git diff-tree
--raw -z -M, parsed)."""

from __future__ import annotations

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
