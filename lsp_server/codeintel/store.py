"""The index's SQLite file: one row per file (stat and content hash), one per symbol."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from lsp_server.codeintel.languages import LANGUAGES
from lsp_server.codeintel.outline import Symbol
from lsp_server.codeintel.parsing import FileResult

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
  path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  hash TEXT NOT NULL, language TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS symbols(
  path TEXT NOT NULL, name TEXT NOT NULL, name_lower TEXT NOT NULL, kind TEXT NOT NULL,
  kind_rank INTEGER NOT NULL, parent TEXT NOT NULL, start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL, start_byte INTEGER NOT NULL, end_byte INTEGER NOT NULL,
  signature TEXT NOT NULL, language TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS symbols_by_path ON symbols(path);
-- No index on names: search matches substrings (LIKE '%q%'), which no B-tree serves
-- (the plan scans the table either way); the one older files have only slowed writes.
DROP INDEX IF EXISTS symbols_by_name;
"""

_SYMBOL_COLUMNS = (
    "name, kind, parent, start_line, end_line, start_byte, end_byte, signature, language"
)


@functools.cache
def index_fingerprint() -> str:
    """Changes when the schema, a query or a grammar changes: the old rows are then void."""
    digest = hashlib.sha256(SCHEMA_VERSION.encode())
    queries = resources.files("lsp_server.codeintel").joinpath("queries")
    for spec in LANGUAGES:
        digest.update(queries.joinpath(f"{spec.query or spec.name}.scm").read_bytes())
        distribution = spec.grammar_module.replace("_", "-")
        try:
            digest.update(importlib.metadata.version(distribution).encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(spec.grammar_module.encode())
    return digest.hexdigest()[:16]


def _symbol(row: tuple[object, ...]) -> Symbol:
    name, kind, parent, start, end, start_byte, end_byte, signature, language = row
    return Symbol(
        str(name), str(kind), str(parent), int(str(start)), int(str(end)),
        int(str(start_byte)), int(str(end_byte)), str(signature), str(language),
    )  # fmt: skip


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class IndexStore:
    """Thread-safe: every statement runs under one lock (the build thread and queries share
    the connection)."""

    def __init__(self, db_path: Path) -> None:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self.path = db_path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(db_path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        if self.get_meta("fingerprint") != index_fingerprint():
            self._reset()

    def _reset(self) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM symbols")
            db.execute("DELETE FROM files")
            db.execute("DELETE FROM meta")
            db.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (index_fingerprint(),))

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def file_states(self) -> dict[str, tuple[int, int, str]]:
        """path -> (size, mtime_ns, hash) of every indexed file."""
        with self._lock:
            rows = self._db.execute("SELECT path, size, mtime_ns, hash FROM files").fetchall()
        return {str(p): (int(s), int(m), str(h)) for p, s, m, h in rows}

    def file_state(self, path: str) -> tuple[int, int, str] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT size, mtime_ns, hash FROM files WHERE path = ?", (path,)
            ).fetchone()
        return None if row is None else (int(row[0]), int(row[1]), str(row[2]))

    def store(self, results: Iterable[FileResult]) -> None:
        with self.transaction() as db:
            for result in results:
                if result.gone:
                    db.execute("DELETE FROM files WHERE path = ?", (result.path,))
                    db.execute("DELETE FROM symbols WHERE path = ?", (result.path,))
                    continue
                db.execute(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                    (result.path, result.size, result.mtime_ns, result.content_hash,
                     result.language),
                )  # fmt: skip
                if result.symbols is None:
                    continue  # same content, new stat: the symbols stand
                db.execute("DELETE FROM symbols WHERE path = ?", (result.path,))
                db.executemany(
                    "INSERT INTO symbols VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    result.symbols,
                )

    def remove(self, paths: Iterable[str]) -> None:
        with self.transaction() as db:
            for path in paths:
                db.execute("DELETE FROM files WHERE path = ?", (path,))
                db.execute("DELETE FROM symbols WHERE path = ?", (path,))

    def search(
        self, query: str, kind: str | None, limit: int, paths: list[str] | None = None,
        folder: str = "",
    ) -> list[tuple[str, Symbol]]:  # fmt: skip
        """Exact, case-insensitive exact, prefix, substring; ties by kind, path, line.
        `folder` (relative, ending in `/`) keeps results under it."""
        lower = query.lower()
        where = ["name_lower LIKE ? ESCAPE '\\'"]
        args: list[object] = [f"%{_like_escape(lower)}%"]
        if folder:
            where.append("path LIKE ? ESCAPE '\\'")
            args.append(f"{_like_escape(folder)}%")
        if kind is not None:
            where.append("kind = ?")
            args.append(kind)
        if paths is not None:
            where.append(f"path IN ({', '.join('?' * len(paths))})")
            args.extend(paths)
        sql = (
            f"SELECT path, {_SYMBOL_COLUMNS} FROM symbols WHERE {' AND '.join(where)} "
            "ORDER BY CASE WHEN name = ? THEN 0 WHEN name_lower = ? THEN 1 "
            "WHEN name_lower LIKE ? ESCAPE '\\' THEN 2 ELSE 3 END, kind_rank, path, start_line "
            "LIMIT ?"
        )
        args += [query, lower, f"{_like_escape(lower)}%", limit]
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [(str(row[0]), _symbol(row[1:])) for row in rows]

    def symbols_under(self, prefix: str, limit: int) -> list[tuple[str, Symbol]]:
        """Symbols of one file (`prefix` a file) or of a folder (`prefix` ending in `/`)."""
        if prefix and not prefix.endswith("/"):
            where, args = "path = ?", [prefix]
        else:
            where, args = "path LIKE ? ESCAPE '\\'", [f"{_like_escape(prefix)}%"]
        sql = (
            f"SELECT path, {_SYMBOL_COLUMNS} FROM symbols WHERE {where} "
            "ORDER BY path, start_byte, end_byte DESC LIMIT ?"
        )
        with self._lock:
            rows = self._db.execute(sql, [*args, limit]).fetchall()
        return [(str(row[0]), _symbol(row[1:])) for row in rows]

    def counts(self) -> tuple[int, int]:
        with self._lock:
            files = self._db.execute("SELECT count(*) FROM files").fetchone()[0]
            symbols = self._db.execute("SELECT count(*) FROM symbols").fetchone()[0]
        return int(files), int(symbols)
