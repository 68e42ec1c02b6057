"""What each session has seen of each file, and the per-file mutation locks.

A writer may only change a file whose current version this session has observed: no file
is ever overwritten behind the agent's back, nor behind the user's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Literal

import anyio
import attrs

from lsp_server.runtime.textio import Version


@attrs.frozen
class Observation:
    state: Literal["absent", "present"]
    version: Version | None = None


class Observations:
    """Per session: real path -> unseen (missing key) | absent | present(version)."""

    def __init__(self) -> None:
        self._by_path: dict[Path, Observation] = {}

    def get(self, path: Path) -> Observation | None:
        return self._by_path.get(path)

    def record_present(self, path: Path, version: Version) -> None:
        self._by_path[path] = Observation("present", version)

    def record_absent(self, path: Path) -> None:
        self._by_path[path] = Observation("absent")

    def record(self, path: Path, observation: Observation) -> None:
        self._by_path[path] = observation

    def items(self) -> list[tuple[Path, Observation]]:
        return list(self._by_path.items())

    def __len__(self) -> int:
        return len(self._by_path)


class FileLocks:
    """Server-wide mutation locks, one per real path, always taken in sorted order."""

    def __init__(self) -> None:
        self._locks: dict[Path, anyio.Lock] = {}

    def _lock(self, path: Path) -> anyio.Lock:
        lock = self._locks.get(path)
        if lock is None:
            lock = self._locks[path] = anyio.Lock()
        return lock

    @asynccontextmanager
    async def hold(self, paths: Iterable[Path]) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for path in sorted(set(paths)):
                await stack.enter_async_context(self._lock(path))
            yield
        for path in list(self._locks):
            if not self._locks[path].locked() and self._locks[path].statistics().tasks_waiting == 0:
                del self._locks[path]
