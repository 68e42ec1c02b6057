"""The SDK's tools/list answer of the last start, kept for the front (mcp/front.py)."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
from pathlib import Path
from typing import Any

from lsp_server import __version__, keyed_cache


class ListingCache:
    """The SDK's tools/list answer of the last start, per protocol revision and surface, in
    the state folder, under a key of toolhost's and the SDK's source files (path, size,
    mtime): any change to a tool or to the SDK makes a new key; the newest keys are kept side
    by side (keyed_cache.py). A cache that cannot be read or written is not used."""

    FILE_NAME = "mcp-tools-list.json"

    def __init__(self, state: Path, key: str) -> None:
        self.path = state / self.FILE_NAME
        self.key = key

    @classmethod
    def of(cls, version: str, surface: str) -> ListingCache:
        from lsp_server.dirs import Dirs  # attrs: after the initialize answer

        digest = hashlib.sha256(f"{__version__}\n{version}\n{surface}\n".encode())
        for name, every_file in (("lsp_server", True), ("mcp", False), ("mcp_types", False)):
            spec = importlib.util.find_spec(name)  # finds, does not import
            for folder in (spec.submodule_search_locations or []) if spec else []:
                # toolhost: every module (a tool's schema may change anywhere); the SDK: an
                # upgrade rewrites its __init__.py
                for path in _modules(folder) if every_file else [f"{folder}/__init__.py"]:
                    with contextlib.suppress(OSError):
                        info = os.stat(path)  # noqa: PTH116 (pathlib costs 2x here)
                        digest.update(f"{path}:{info.st_size}:{info.st_mtime_ns}\n".encode())
        return cls(Dirs.from_environment().state, digest.hexdigest())

    @classmethod
    def missing(cls) -> bool:
        """No cache file at all (a first start, a new state folder): the client's tools/list
        will wait for the SDK, so its import starts at once. The state folder as
        Dirs.from_environment finds it, without importing attrs before the first answer."""
        state = os.environ.get("TOOLHOST_STATE_DIR")
        if not state:
            base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
            state = str(Path(base) / "toolhost")
        return not (Path(state) / cls.FILE_NAME).exists()

    def load(self) -> dict[str, Any] | None:
        return keyed_cache.load(self.path, self.key)

    def store(self, result: dict[str, Any]) -> None:
        keyed_cache.store(self.path, self.key, result)


def _modules(folder: str) -> list[str]:
    found = []
    for parent, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        found += [f"{parent}/{name}" for name in sorted(files) if name.endswith(".py")]
    return found
