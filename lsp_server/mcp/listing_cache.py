"""tools/list's answer, made by the front from the tool registry (the SDK answers the same:
tests/mcp/test_front.py) and kept for the next start (mcp/stdio/front.py)."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_server import __version__
from lsp_server.home import keyed_cache

if TYPE_CHECKING:
    from lsp_server.core.contract import Registry, Surface
    from lsp_server.mcp.calls.tool_calls import Calls


def tool_listing(registry: Registry, surface: Surface) -> list[dict[str, Any]]:
    """tools/list: the contract's schemas as they are, annotations from the entries."""
    listing = []
    for tool in registry.surface(surface):
        entry = tool.contract
        listing.append(
            {
                "name": entry.name,
                "description": entry.description,
                "inputSchema": entry.public()["inputSchema"],
                "annotations": entry.annotations(),
            }
        )
    return listing


class ListingCache:
    """tools/list's answer of the last start, per protocol revision and surface, in the state
    folder, under a key of toolhost's source files (path, size, mtime): any change to a tool
    makes a new key; the newest keys are kept side by side (keyed_cache.py). A cache that
    cannot be read or written is not used."""

    FILE_NAME = "mcp-tools-list.json"

    def __init__(self, state: Path, key: str) -> None:
        self.path = state / self.FILE_NAME
        self.key = key

    @classmethod
    def of(cls, version: str, surface: str) -> ListingCache:
        from lsp_server.home.dirs import Dirs  # after the initialize answer

        digest = hashlib.sha256(f"{__version__}\n{version}\n{surface}\n".encode())
        spec = importlib.util.find_spec("lsp_server")  # finds, does not import
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for path in _modules(folder):  # every module: a tool's schema may change anywhere
                try:
                    info = os.stat(path)  # noqa: PTH116 (pathlib costs 2x here)
                except OSError:
                    continue
                digest.update(f"{path}:{info.st_size}:{info.st_mtime_ns}\n".encode())
        return cls(Dirs.from_environment().state, digest.hexdigest())

    def load(self) -> dict[str, Any] | None:
        return keyed_cache.load(self.path, self.key)

    def store(self, result: dict[str, Any]) -> None:
        keyed_cache.store(self.path, self.key, result)


class Listing:
    """The answer to a plain tools/list on this connection: the cached one, else made from
    the registry in a thread (the runtime's warm-up builds the same registry first) and kept.
    A client's first start does not wait for the SDK's import (Codex gives a server about a
    second before its first turn goes out without that server's tools: docs/MCP.md)."""

    def __init__(self, cache: ListingCache, calls: Calls) -> None:
        self.cache = cache
        self.calls = calls
        self._result = cache.load()

    async def result(self) -> dict[str, Any]:
        if self._result is None:
            self._result = await asyncio.to_thread(self._made)
        return self._result

    def _made(self) -> dict[str, Any]:
        result = {"tools": tool_listing(self.calls.registry(), self.calls.surface)}
        self.cache.store(result)
        return result


def _modules(folder: str) -> list[str]:
    found = []
    for parent, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        found += [f"{parent}/{name}" for name in sorted(files) if name.endswith(".py")]
    return found
