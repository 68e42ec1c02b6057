"""The server-wide owner of symbol indexes: one per workspace root, built in the
background, told about changed files (watched-file events, toolhost's own writes)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from lsp_server.codeintel.index import SymbolIndex, all_cores, default_index_path
from lsp_server.procs.priority import lower_priority

log = logging.getLogger(__name__)

BACKGROUND_NICENESS = 10
"""Added to the nice value of a background build's thread and parser processes (and their
disk reads go last): they take what the editor, the language servers, the searches and
the server's own event loop leave."""


def background_workers() -> int:
    """One core stays free for the editor while the server builds: all but one, at least
    one (a 2-core machine builds with one parser process)."""
    return max(1, all_cores() - 1)


BuildListener = Callable[[Path, "BuildState"], None]
"""Told (from the build thread) when a background build starts, progresses and ends."""


@attrs.define
class BuildState:
    """Progress of a root's background build, for toolhost/status and the tools' notes."""

    running: bool = False
    done: int = 0
    total: int = 0
    error: str | None = None


class CodeIndexService:
    def __init__(
        self, state_folder: Path | None = None, *, excludes: Sequence[str] = (),
        workers: int | None = None, sweep_interval: float = 3.0, background_builds: bool = True,
    ) -> None:  # fmt: skip
        self.state_folder = state_folder
        self.background_builds = background_builds
        """False in short-lived processes (`toolhost call`): a build they start would die
        with them."""
        self.excludes = tuple(excludes)
        self.workers = workers or background_workers()
        self.sweep_interval = sweep_interval
        self._indexes: dict[Path, SymbolIndex] = {}
        self._builds: dict[Path, BuildState] = {}
        self._threads: dict[Path, threading.Thread] = {}
        self._lock = threading.Lock()
        self.build_listeners: list[BuildListener] = []

    def index_for(self, root: Path) -> SymbolIndex:
        key = root.resolve()
        with self._lock:
            index = self._indexes.get(key)
            if index is None:
                index = SymbolIndex(
                    key,
                    default_index_path(key, self.state_folder),
                    excludes=self.excludes,
                    workers=self.workers,
                    niceness=BACKGROUND_NICENESS,
                    sweep_interval=self.sweep_interval,
                )
                self._indexes[key] = index
            return index

    def build_state(self, root: Path) -> BuildState:
        with self._lock:
            return self._builds.setdefault(root.resolve(), BuildState())

    def start_build(self, root: Path) -> bool:
        """Start the full build of `root` in a background thread unless one runs already."""
        index = self.index_for(root)
        state = self.build_state(root)
        with self._lock:
            if state.running:
                return False
            state.running, state.error = True, None
            thread = threading.Thread(
                target=self._build, args=(index, state), name=f"index {root}", daemon=True
            )
            self._threads[index.root] = thread
        thread.start()
        return True

    def _build(self, index: SymbolIndex, state: BuildState) -> None:
        def progress(done: int, total: int) -> None:
            state.done, state.total = done, total
            self._tell(index.root, state)

        lower_priority(BACKGROUND_NICENESS)  # the walk here; the parser processes too
        try:
            index.refresh(progress)
        except Exception as exc:  # reported through status; the next query retries
            log.exception("building the symbol index of %s failed", index.root)
            state.error = f"{type(exc).__name__}: {exc}"
        finally:
            state.running = False
            self._tell(index.root, state)

    def _tell(self, root: Path, state: BuildState) -> None:
        for listener in self.build_listeners:
            try:
                listener(root, attrs.evolve(state))
            except Exception:  # a listener's failure must not stop the build
                log.exception("index build listener failed")

    def wait_for_build(self, root: Path, timeout: float | None = None) -> None:
        with self._lock:
            thread = self._threads.get(root.resolve())
        if thread is not None:
            thread.join(timeout)

    def files_changed(self, paths: Iterable[Path]) -> None:
        """Note changed, created or deleted files for every open index that holds them; each
        index re-checks them before its next query. Cheap: safe on the event loop."""
        by_root: dict[Path, list[Path]] = {}
        with self._lock:
            roots = list(self._indexes)
        for path in paths:
            absolute = path if path.is_absolute() else path.absolute()
            for root in roots:
                if absolute == root or root in absolute.parents:
                    by_root.setdefault(root, []).append(absolute)
        for root, changed in by_root.items():
            self._indexes[root].note_changes(changed)

    def status(self) -> dict[str, Any]:
        with self._lock:
            items = list(self._indexes.items())
        roots = []
        for root, index in items:
            files, symbols = index.store.counts()
            build = self.build_state(root)
            roots.append(
                {
                    "root": str(root),
                    "files": files,
                    "symbols": symbols,
                    "complete": index.is_complete,
                    "parsedThisRun": index.parse_count,
                    "building": build.running,
                    "progress": [build.done, build.total],
                    "error": build.error,
                }
            )
        return {"roots": roots}

    def close(self) -> None:
        with self._lock:
            threads = list(self._threads.values())
            for index in self._indexes.values():
                index.cancel()
        for thread in threads:
            thread.join(timeout=30)
        with self._lock:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()
