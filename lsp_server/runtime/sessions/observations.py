"""What each session has seen of each file, and the per-file mutation locks.

A writer may only change a file whose current version this session has observed: no file
is ever overwritten behind the agent's back, nor behind the user's.
"""

from __future__ import annotations

import array
import zlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    nullcontext,
)
from pathlib import Path
from typing import Literal

import anyio
import attrs

from lsp_server.fs.textio import Version

SEEN_TEXT_CHARS = 256 * 1024
"""Files up to this size keep the text seen (to show the diff of a later change)."""
SEEN_BUDGET = 16 * 1024 * 1024
"""What the kept contents of all sessions may cost (chars of text, bytes of digests); over
it the oldest are dropped (their observations stay, without content)."""


@attrs.frozen
class SeenContent:
    """What a session saw of a file, so that a refusal can show what changed since: the
    text itself for a small file, else a 4-byte digest per line (it can count changed
    lines, not show them)."""

    text: str | None = None
    line_digests: bytes | None = None
    lines: int = 0
    chars: int = 0

    @classmethod
    def of(cls, text: str) -> SeenContent:
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if len(text) <= SEEN_TEXT_CHARS:
            return cls(text=text, lines=lines, chars=len(text))
        return cls(line_digests=line_digests(text), lines=lines, chars=len(text))

    @property
    def cost(self) -> int:
        return len(self.text) if self.text is not None else len(self.line_digests or b"")


def line_digests(text: str) -> bytes:
    encoded = text.encode("utf-8", "surrogateescape").splitlines()
    return array.array("I", map(zlib.crc32, encoded)).tobytes()


@attrs.frozen
class Observation:
    state: Literal["absent", "present"]
    version: Version | None = None
    seen: SeenContent | None = None
    """The content observed (optional: dropped under memory pressure, or not kept)."""


class SeenBudget:
    """The server-wide bound on kept contents, oldest dropped first across sessions."""

    def __init__(self, limit: int = SEEN_BUDGET) -> None:
        self.limit = limit
        self.used = 0
        self._order: OrderedDict[tuple[int, Path], Observations] = OrderedDict()

    def add(self, owner: Observations, path: Path, cost: int) -> None:
        self._order[(id(owner), path)] = owner
        self.used += cost
        while self.used > self.limit and len(self._order) > 1:
            (_, oldest), holder = next(iter(self._order.items()))
            holder.drop_content(oldest)

    def touch(self, owner: Observations, path: Path) -> None:
        """Kept content seen again: the last to be dropped."""
        key = (id(owner), path)
        if key in self._order:
            self._order.move_to_end(key)

    def remove(self, owner: Observations, path: Path, cost: int) -> None:
        if self._order.pop((id(owner), path), None) is not None:
            self.used -= cost


class Observations:
    """Per session: real path -> unseen (missing key) | absent | present(version), with
    the content seen while the (shared) budget allows."""

    def __init__(self, budget: SeenBudget | None = None) -> None:
        self._by_path: dict[Path, Observation] = {}
        self._budget = budget or SeenBudget()
        self._cost = 0

    def get(self, path: Path) -> Observation | None:
        return self._by_path.get(path)

    def record_present(self, path: Path, version: Version, text: str | None = None) -> None:
        """`text`: the content seen at `version`, when known (kept within the budget)."""
        held = self._by_path.get(path)
        if (
            text is not None
            and held is not None
            and held.seen is not None
            and held.version == version
            and version.sha256 is not None
        ):
            # Read again, unchanged (the hash says so): the same observation, now the newest.
            self._budget.touch(self, path)
            return
        seen = SeenContent.of(text) if text is not None else None
        self._put(path, Observation("present", version, seen))

    def record_absent(self, path: Path) -> None:
        self._put(path, Observation("absent"))

    def _put(self, path: Path, observation: Observation) -> None:
        held = self._by_path.get(path)
        if held is not None and held.seen is not None:  # replaced below: no evolve first
            self._cost -= held.seen.cost
            self._budget.remove(self, path, held.seen.cost)
        self._by_path[path] = observation
        if observation.seen is not None:
            self._cost += observation.seen.cost
            self._budget.add(self, path, observation.seen.cost)

    def drop_content(self, path: Path) -> None:
        """Forget the content seen of `path`; its observation (the version) stays."""
        held = self._by_path.get(path)
        if held is None or held.seen is None:
            return
        self._cost -= held.seen.cost
        self._budget.remove(self, path, held.seen.cost)
        self._by_path[path] = attrs.evolve(held, seen=None)

    @property
    def content_cost(self) -> int:
        """What this session's kept contents cost now (chars and digest bytes)."""
        return self._cost

    def record(self, path: Path, observation: Observation) -> None:
        """Keep `observation` as it is (a CLI session loads its earlier ones so)."""
        self._put(path, observation)

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

    def hold(self, paths: Iterable[Path]) -> AbstractAsyncContextManager[None]:
        """The locks of `paths` for the block (a reader's empty list: no lock, no sweep)."""
        wanted = sorted(set(paths))
        return self._hold(wanted) if wanted else nullcontext()

    @asynccontextmanager
    async def _hold(self, paths: list[Path]) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for path in paths:
                await stack.enter_async_context(self._lock(path))
            yield
        for path in list(self._locks):
            if not self._locks[path].locked() and self._locks[path].statistics().tasks_waiting == 0:
                del self._locks[path]
