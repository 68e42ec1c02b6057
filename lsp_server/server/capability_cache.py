"""The `toolhost` capability of the initialize answer (contract hashes, tool count), cached
in the state folder so that a server can answer initialize before it imports a single tool.

The key is the package's own source files (path, size, mtime) and the version: any change to
any module — a tool, a schema helper, an engine a schema reads from — gives a new key, and the
capability is computed from the registry again. The newest keys are kept side by side
(keyed_cache.py); a cache that cannot be read or written is simply not used."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from lsp_server import __version__
from lsp_server.home import keyed_cache

PACKAGE = Path(__file__).resolve().parents[1]
FILE_NAME = "initialize-capability.json"


def source_key() -> str:
    digest = hashlib.sha256(__version__.encode())
    for relative, stat in sorted(_sources(str(PACKAGE), ())):
        digest.update(f"{'/'.join(relative)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _sources(folder: str, parts: tuple[str, ...]) -> list[tuple[tuple[str, ...], os.stat_result]]:
    """Every `*.py` under `folder`, as (path parts, stat): one scandir per folder (what
    `Path.rglob` plus a stat per file cost about 3x as much, before every initialize answer)."""
    found: list[tuple[tuple[str, ...], os.stat_result]] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                found += _sources(entry.path, (*parts, entry.name))
            elif entry.name.endswith(".py") and entry.is_file():
                found.append(((*parts, entry.name), entry.stat()))
    return found


def load(state: Path, key: str) -> dict[str, Any] | None:
    return keyed_cache.load(state / FILE_NAME, key)


def store(state: Path, key: str, capability: dict[str, Any]) -> None:
    keyed_cache.store(state / FILE_NAME, key, capability)
