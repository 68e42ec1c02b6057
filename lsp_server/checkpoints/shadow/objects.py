"""Git objects written in-process: a writer's few files need no git process.

The formats are git's own (loose objects: zlib of "<kind> <size>\\0<data>", named by the
SHA-1 of that header and data), so the shadow repository's git reads, packs and prunes
them like any other object.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import tempfile
import zlib
from collections.abc import Iterable, Mapping
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
    return write_object(git_dir, "tree", flat_tree(entries))


def flat_tree(entries: Mapping[str, tuple[int, str]]) -> bytes:
    """The body of a tree of name -> (mode, oid) with no sub-folders."""
    body = bytearray()
    # git orders tree entries by name, a folder's name compared as if it ended with "/".
    for name in sorted(entries, key=lambda n: n + "/" if entries[n][0] == TREE_MODE else n):
        mode, oid = entries[name]
        body += f"{mode:o} {name}\0".encode() + bytes.fromhex(oid)
    return bytes(body)


def write_pack(git_dir: Path, items: Iterable[tuple[str, bytes]]) -> list[str]:
    """Store many objects ((kind, data)) as one pack and its index (git's pack v2 and idx v2
    formats): two files for a whole batch instead of one per object. Returns their ids."""
    pack = bytearray(b"PACK" + struct.pack(">II", 2, 0))
    found: dict[str, tuple[int, int]] = {}  # oid -> (offset, crc32)
    for kind, data in items:
        oid = object_id(kind, data)
        if oid in found:
            continue
        start = len(pack)
        pack += _pack_header(_PACK_TYPES[kind], len(data)) + zlib.compress(data, 1)
        found[oid] = (start, zlib.crc32(pack[start:]))
    if not found:
        return []
    pack[8:12] = struct.pack(">I", len(found))
    pack_digest = hashlib.sha1(pack, usedforsecurity=False).digest()
    pack += pack_digest
    ordered = sorted(found)
    index = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    fanout = [0] * 256
    for oid in ordered:
        fanout[int(oid[:2], 16)] += 1
    total = 0
    for count in fanout:
        total += count
        index += struct.pack(">I", total)
    for oid in ordered:
        index += bytes.fromhex(oid)
    for oid in ordered:
        index += struct.pack(">I", found[oid][1])
    large: list[int] = []
    for oid in ordered:
        offset = found[oid][0]
        if offset < 0x80000000:
            index += struct.pack(">I", offset)
        else:
            index += struct.pack(">I", 0x80000000 | len(large))
            large.append(offset)
    for offset in large:
        index += struct.pack(">Q", offset)
    index += pack_digest
    index += hashlib.sha1(index, usedforsecurity=False).digest()
    folder = git_dir / "objects" / "pack"
    name = f"pack-{pack_digest.hex()}"
    _write_new(folder, f"{name}.pack", bytes(pack))
    _write_new(folder, f"{name}.idx", bytes(index))  # git finds a pack by its index: last
    return list(found)


_PACK_TYPES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}


def _pack_header(kind: int, size: int) -> bytes:
    first = (kind << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(first | 0x80)
        first = size & 0x7F
        size >>= 7
    out.append(first)
    return bytes(out)


def _write_new(folder: Path, name: str, data: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix="tmp_pack_", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        Path(temp).chmod(0o444)
        Path(temp).replace(folder / name)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(temp).unlink()
        raise
