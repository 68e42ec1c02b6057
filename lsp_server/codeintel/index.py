"""The persistent, incremental symbol index of one workspace root.

A file is re-parsed only when its (size, mtime_ns) changed and then its content hash
changed. A full refresh is a stat sweep (walk.py) plus the parse of what changed, in
worker processes when there is a lot (pool.py: a worker that dies costs one file), each
batch's rows written in one transaction. Change signals (watched files, toolhost's own
writes) go through `update_paths`; `ensure_fresh` sweeps when the last sweep is older
than a few seconds.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import attrs

from lsp_server.codeintel import candidates
from lsp_server.codeintel.outline import Symbol
from lsp_server.codeintel.parsing import FileResult, index_batch, index_file
from lsp_server.codeintel.pool import BatchTask, parse_batches
from lsp_server.codeintel.store import IndexStore
from lsp_server.codeintel.walk import is_indexable, stat_file, walk

Progress = Callable[[int, int], None]
"""Called with (files done, files to do)."""

BATCH_FILES = 48
INLINE_BATCH_FILES = 4
"""Files parsed inline between two looks at a search's time limit (a 48-file batch of large
TypeScript took 0.57 s, past a 0.5 s limit)."""
MAX_PATHS_IN_QUERY = 5000
PARALLEL_MIN_FILES = 200
"""Fewer changed files than this are parsed inline: a worker pool costs ~0.3 s to start."""
LISTING_SHARE = 0.6
"""Of a cold search's time limit, what rg may take to list the files that mention the name
once it has found one: the rest parses them (an rg that took it all would leave nothing to
answer from). One that has found none by then goes on: there is nothing to parse yet."""


def all_cores() -> int:
    return os.cpu_count() or 1


def default_index_path(root: Path, state_folder: Path | None = None) -> Path:
    """<state folder>/index/<hash of the root's real path>.sqlite; the state folder defaults
    to $XDG_STATE_HOME/toolhost."""
    if state_folder is None:
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        state_folder = Path(base) / "toolhost"
    key = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return state_folder / "index" / f"{key}.sqlite"


@attrs.frozen
class ColdSearch:
    rows: list[tuple[str, Symbol]]
    timed_out: bool
    """The time limit stopped it: the rows come from the files parsed by then."""


@attrs.define
class RefreshStats:
    files: int = 0
    """Files the walk found."""
    parsed: int = 0
    """Files parsed (new content)."""
    rehashed: int = 0
    """Files whose stat changed but content did not."""
    removed: int = 0


class SymbolIndex:
    def __init__(
        self, root: Path, db_path: Path | None = None, *, excludes: Sequence[str] = (),
        workers: int | None = None, niceness: int = 0, sweep_interval: float = 3.0,
        batch_task: BatchTask = index_batch,
    ) -> None:  # fmt: skip
        self.root = root.resolve()
        self.excludes = tuple(excludes)
        self.workers = max(1, min(workers or all_cores(), all_cores()))
        """Parser processes of a large build (default: one per core)."""
        self.niceness = niceness
        """Added to the workers' nice value (the server's background builds yield the CPU
        to the editor)."""
        self._batch_task = batch_task
        self.sweep_interval = sweep_interval
        self.store = IndexStore(db_path or default_index_path(self.root))
        self.parse_count = 0
        """Files this instance parsed (tests check that a restart parses nothing)."""
        self._last_sweep = float("-inf")
        self._refresh_lock = threading.Lock()
        self._pending: set[Path] = set()
        self._pending_lock = threading.Lock()
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        """Stop a running build after its current batch (shutdown must not wait for it)."""
        self._cancelled.set()

    def close(self) -> None:
        self.cancel()
        self.store.close()

    @property
    def is_complete(self) -> bool:
        """A full build finished once (the rows cover the whole tree, maybe stale)."""
        return self.store.get_meta("complete") == "1"

    @property
    def is_refreshing(self) -> bool:
        return self._refresh_lock.locked()

    def relative(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    # -- building -------------------------------------------------------------------

    def refresh(self, progress: Progress | None = None, folder: str = "") -> RefreshStats:
        """Stat sweep of the tree (or of one folder, relative, `/`-separated); parse what
        changed; drop what is gone. A folder refresh does not wait for a full one running
        in another thread: both only write whole files' rows, in transactions."""
        prefix = folder.strip("/") + "/" if folder.strip("/") else ""
        if prefix:
            return self._sweep(progress, prefix)
        with self._refresh_lock:
            started = time.monotonic()
            stats = self._sweep(progress, "")
            if not self._cancelled.is_set():
                self.store.set_meta("complete", "1")
                self._last_sweep = started
            return stats

    def _sweep(self, progress: Progress | None, prefix: str) -> RefreshStats:
        stats = RefreshStats()
        known = {
            path: state
            for path, state in self.store.file_states().items()
            if path.startswith(prefix)
        }
        seen: set[str] = set()
        todo: list[tuple[str, str | None]] = []
        for found in walk(self.root / prefix, self.excludes):
            entry = attrs.evolve(found, path=prefix + found.path)
            seen.add(entry.path)
            state = known.get(entry.path)
            if state is None or (state[0], state[1]) != (entry.size, entry.mtime_ns):
                todo.append((entry.path, state[2] if state else None))
        gone = [path for path in known if path not in seen]
        self.store.remove(gone)
        stats.files, stats.removed = len(seen), len(gone)
        for batch in self._parse(todo, progress):
            self._record(batch, stats)
        return stats

    def ensure_fresh(self) -> RefreshStats | None:
        """Apply noted changes; sweep when the last sweep is older than `sweep_interval`
        (and none is running). Returns the sweep's figures, None when it did not sweep."""
        self.apply_changes()
        if time.monotonic() - self._last_sweep < self.sweep_interval or self.is_refreshing:
            return None
        return self.refresh()

    def note_changes(self, paths: Iterable[Path]) -> None:
        """Remember changed paths (cheap, any thread); the next query re-checks them."""
        paths = list(paths)
        with self._pending_lock:
            self._pending.update(paths)
        if any(path.name == ".gitignore" for path in paths):
            self._last_sweep = float("-inf")  # what is ignored changed: sweep next time

    def apply_changes(self) -> RefreshStats:
        with self._pending_lock:
            pending, self._pending = self._pending, set()
        return self.update_paths(sorted(pending)) if pending else RefreshStats()

    def update_paths(self, paths: Iterable[Path]) -> RefreshStats:
        """Re-check the given files now (created, changed or deleted)."""
        stats = RefreshStats()
        todo = []
        for path in paths:
            rel = self.relative(path)
            if rel is None:
                continue
            state = self.store.file_state(rel)
            if is_indexable(self.root, rel, self.excludes):
                todo.append((rel, state[2] if state else None))
            elif state is not None:  # now ignored, or no longer a file
                self.store.remove([rel])
                stats.removed += 1
        self._record([index_file(str(self.root), rel, h) for rel, h in todo], stats)
        return stats

    def _record(self, batch: list[FileResult], stats: RefreshStats) -> None:
        kept = []
        for result in batch:
            if result.gone:
                stats.removed += 1 if self.store.file_state(result.path) else 0
            elif result.symbols is None:
                stats.rehashed += 1
            elif not result.skipped:
                stats.parsed += 1
                self.parse_count += 1
            # A file no grammar covers (a watched-file event for README.md) is not stored.
            if result.language or result.gone:
                kept.append(result)
        self.store.store(kept)

    def _parse(
        self, todo: list[tuple[str, str | None]], progress: Progress | None,
        *, foreground: bool = False, deadline: float | None = None,
    ) -> Iterator[list[FileResult]]:  # fmt: skip
        """Parse in batches; a background build's workers are niced, a query's
        (`foreground`) run at the caller's priority on every core. Past `deadline`
        (time.monotonic()) no batch starts, and none in flight is waited for."""
        total, done = len(todo), 0
        if progress:
            progress(0, total)
        inline = total < PARALLEL_MIN_FILES
        size = INLINE_BATCH_FILES if inline and deadline is not None else BATCH_FILES
        batches = [todo[i : i + size] for i in range(0, total, size)]
        if inline:
            for batch in batches:
                if self._cancelled.is_set():
                    return
                if deadline is not None and time.monotonic() > deadline:
                    return
                results = self._batch_task(str(self.root), batch)
                done += len(batch)
                if progress:
                    progress(done, total)
                yield results
            return
        for results in parse_batches(
            str(self.root), batches, workers=all_cores() if foreground else self.workers,
            niceness=0 if foreground else self.niceness, cancelled=self._cancelled,
            task=self._batch_task, deadline=deadline,
        ):  # fmt: skip
            done += len(results)
            if progress:
                progress(done, total)
            yield results

    # -- queries ----------------------------------------------------------------------

    def search(
        self, query: str, kind: str | None = None, limit: int = 100, folder: str = ""
    ) -> list[tuple[str, Symbol]]:
        return self.store.search(query, kind, limit, folder=folder)

    def cold_search(
        self, query: str, kind: str | None = None, limit: int = 100, folder: str = ""
    ) -> list[tuple[str, Symbol]]:
        """Search without a full index: parse only the files that mention the name."""
        return self.search_mentions(query, kind, limit, folder=folder).rows

    def search_mentions(
        self, query: str, kind: str | None = None, limit: int = 100, *, folder: str = "",
        timeout_seconds: float = candidates.RG_TIMEOUT_SECONDS,
    ) -> ColdSearch:  # fmt: skip
        """`cold_search` at a cost that does not grow with the tree: rg lists the files
        under `folder` that mention the name, and only those are parsed (those not
        already fresh in the store), with every core at the caller's priority. At the
        time limit it stops and answers from what it had parsed: rg stops at LISTING_SHARE
        of it when it has found a file, and no batch still being parsed is waited for."""
        deadline = time.monotonic() + timeout_seconds
        self.apply_changes()
        scope = folder if folder.endswith("/") else folder.rpartition("/")[0] + "/"
        scope = "" if scope == "/" else scope
        mentions = candidates.files_mentioning(
            self.root, query, self.excludes, folder=scope, timeout_seconds=timeout_seconds,
            found_by=timeout_seconds * LISTING_SHARE,
        )  # fmt: skip
        todo = []
        for rel in mentions.paths:
            state = self.store.file_state(rel)
            stat = stat_file(self.root, rel)
            if stat is None or state is None or (state[0], state[1]) != (stat.size, stat.mtime_ns):
                todo.append((rel, state[2] if state else None))
        stats = RefreshStats()
        parsed = 0
        for batch in self._parse(todo, None, foreground=True, deadline=deadline):
            self._record(batch, stats)
            parsed += len(batch)
        timed_out = mentions.timed_out or parsed < len(todo)
        if not mentions.paths:
            return ColdSearch([], timed_out)
        # A name in thousands of files: the rows are fresh for all of them anyway.
        paths = mentions.paths
        restrict = paths if len(paths) <= MAX_PATHS_IN_QUERY and not timed_out else None
        if timed_out:  # only what was parsed by now, not rows left from an older run
            restrict = [rel for rel in paths if self.store.file_state(rel) is not None]
        rows = self.store.search(query, kind, limit, paths=restrict, folder=folder)
        return ColdSearch(rows, timed_out)

    def symbols_under(self, rel: str, limit: int = 10_000) -> list[tuple[str, Symbol]]:
        return self.store.symbols_under(rel, limit)
