"""Reading and parsing files for the index; runs in worker processes as well as inline.

Only plain data crosses the process boundary: paths in, FileResult rows out.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import attrs

from lsp_server.codeintel import languages
from lsp_server.codeintel.kinds import KIND_RANK
from lsp_server.codeintel.outline import symbol_rows
from lsp_server.codeintel.walk import MAX_FILE_BYTES

BINARY_SNIFF_BYTES = 8192

StoredRow = tuple[str, str, str, str, int, str, int, int, int, int, str, str]
"""A row of the index's `symbols` table, built in the worker so that the process writing
the index only hands rows to SQLite: path, name, name_lower, kind, kind_rank, parent,
start_line, end_line, start_byte, end_byte, signature, language."""


@attrs.frozen
class FileResult:
    path: str
    size: int
    mtime_ns: int
    content_hash: str
    language: str
    symbols: tuple[StoredRow, ...] | None
    """The symbols as plain rows (cheap to pickle between processes); None when the
    content hash matched the known one and nothing was parsed."""
    skipped: bool = False
    """Binary, too large or unreadable: recorded so the stat sweep does not retry it."""
    gone: bool = False
    """The file vanished between the walk and the read: its rows are dropped."""


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def index_file(root: str, rel: str, known_hash: str | None) -> FileResult:
    """Parse one file unless its content hash is `known_hash`."""
    spec = languages.language_for_path(rel)
    path = Path(root) / rel
    try:
        stat = path.stat()
        data = path.read_bytes() if stat.st_size <= MAX_FILE_BYTES else b""
    except OSError:
        return FileResult(rel, 0, 0, "", "", (), gone=True)
    name = spec.name if spec else ""
    if spec is None or stat.st_size > MAX_FILE_BYTES or is_binary(data):
        return FileResult(rel, stat.st_size, stat.st_mtime_ns, "", name, (), skipped=True)
    digest = content_hash(data)
    if digest == known_hash:
        return FileResult(rel, stat.st_size, stat.st_mtime_ns, digest, name, None)
    symbols = tuple(
        (rel, row[0], row[0].lower(), row[1], KIND_RANK[row[1]], *row[2:])
        for row in symbol_rows(spec.name, data)
    )
    return FileResult(rel, stat.st_size, stat.st_mtime_ns, digest, name, symbols)


def unparsable(root: str, rel: str) -> FileResult:
    """The row of a file whose parse killed its worker: skipped, with its stat, so that
    only a change to it brings it back."""
    spec = languages.language_for_path(rel)
    try:
        stat = (Path(root) / rel).stat()
    except OSError:
        return FileResult(rel, 0, 0, "", "", (), gone=True)
    name = spec.name if spec else ""
    return FileResult(rel, stat.st_size, stat.st_mtime_ns, "", name, (), skipped=True)


def index_batch(root: str, batch: list[tuple[str, str | None]]) -> list[FileResult]:
    """A worker task: several files, so that process hops stay cheap."""
    return [index_file(root, rel, known_hash) for rel, known_hash in batch]
