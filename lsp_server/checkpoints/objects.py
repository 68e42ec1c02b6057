"""Git objects written in-process: a writer's few files need no git process.

The formats are git's own (loose objects: zlib of "<kind> <size>\\0<data>", named by the
SHA-1 of that header and data), so the shadow repository's git reads, packs and prunes
them like any other object.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from collections.abc import Mapping
from pathlib import Path

TREE_MODE = 0o040000


def object_id(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data, usedforsecurity=False).hexdigest()


def loose_path(git_dir: Path, oid: str) -> Path:
    return git_dir / "objects" / oid[:2] / oid[2:]


def write_object(git_dir: Path, kind: str, data: bytes) -> str:
    """Store one object (no-op when it exists, loose or packed is all the same to git)."""
    header = f"{kind} {len(data)}\0".encode()
    oid = hashlib.sha1(header + data, usedforsecurity=False).hexdigest()
    target = loose_path(git_dir, oid)
    if target.exists():
        return oid
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix="tmp_obj_", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(zlib.compress(header + data, 1))
        Path(temp).chmod(0o444)
        Path(temp).replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(temp).unlink()
        raise
    return oid


def write_blob(git_dir: Path, data: bytes) -> str:
    return write_object(git_dir, "blob", data)


def write_flat_tree(git_dir: Path, entries: Mapping[str, tuple[int, str]]) -> str:
    """A tree of name -> (mode, oid) with no sub-folders (names must not contain '/')."""
    body = bytearray()
    # git orders tree entries by name, a folder's name compared as if it ended with "/".
    for name in sorted(entries, key=lambda n: n + "/" if entries[n][0] == TREE_MODE else n):
        mode, oid = entries[name]
        body += f"{mode:o} {name}\0".encode() + bytes.fromhex(oid)
    return write_object(git_dir, "tree", bytes(body))
