"""Checkpoints of calls that change the workspace (a service; safety.md §10).

- A writer: dispatch records the exact files of its WritePlan before it publishes and again
  after (`before_write` / `after_write`), as the tools read them (open editor buffers
  included).
- A bash command that is not plainly read-only, foreground or background: every root is
  snapshotted into its shadow repository before it starts and again when it ends, exits or
  is killed (`before_command` / `after_command`); the difference is what it changed.

Git work runs in worker threads, one at a time per root; trimming to the bounds runs after
the call, off its path (`settle` waits for it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import stat
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from lsp_server.checkpoints import objects
from lsp_server.checkpoints.command_records import finish_command, snapshot_root
from lsp_server.checkpoints.file_states import (
    disk_state,
    file_record,
    git_mode,
    large_identity,
    moved_record,
    paths_of,
    relative,
)
from lsp_server.checkpoints.records import (
    Bounds,
    Checkpoint,
    CheckpointStore,
    FileRecord,
    Reads,
)
from lsp_server.checkpoints.restore import Current, Present
from lsp_server.checkpoints.shadow import ShadowError
from lsp_server.checkpoints.tree_changes import Entry
from lsp_server.checkpoints.watcher import RootWatchers
from lsp_server.checkpoints.windows import CommandWindow, Listed, WriteWindow
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.runtime.fs import textio
from lsp_server.runtime.fs.workspace import Workspace

if TYPE_CHECKING:
    from lsp_server.runtime.file_service import DocumentSource

log = logging.getLogger(__name__)

TRIM_EVERY = 16


class Checkpoints:
    def __init__(
        self,
        workspace: Workspace,
        config: CheckpointsConfig,
        state_folder: Path | None,
        *,
        documents: DocumentSource | None = None,
    ) -> None:
        self.workspace = workspace
        self.config = config
        self.state_folder = state_folder
        self._stores: dict[Path, CheckpointStore] = {}
        self._locks: dict[Path, threading.Lock] = {}
        self._stores_lock = threading.Lock()
        self._trim: asyncio.Task[None] | None = None
        self._trim_again = False
        self._since_trim = 0
        self._trimmed_once = False
        self._grown_bytes = 0
        self.documents: DocumentSource | None = documents
        self._failed: dict[str, str] = {}
        self.watchers = RootWatchers()  # what changed since a root's last snapshot

    @property
    def enabled(self) -> bool:
        return self.config.enabled and self.state_folder is not None

    def roots(self) -> list[Path]:
        return [*self.workspace.roots, *self.workspace.extra_roots]

    def store(self, root: Path) -> CheckpointStore:
        with self._stores_lock:  # worker threads ask for stores concurrently
            store = self._stores.get(root)
            if store is None:
                assert self.state_folder is not None
                store = CheckpointStore(self.state_folder, root, self.config.max_file_bytes)
                self._stores[root] = store
                self._locks[root] = threading.Lock()
            return store

    def root_of(self, path: Path) -> Path | None:
        for root in self.roots():
            if path == root or root in path.parents:
                return root
        return None

    def root_lock(self, root: Path) -> threading.Lock:
        self.store(root)
        return self._locks[root]

    # -- commands (command_records.py does the work) ------------------------------------

    async def before_command(
        self, call_id: str, session: str, tool: str, label: str
    ) -> CommandWindow | None:
        if not self.enabled:
            return None
        window = CommandWindow(call_id, session, tool, label, time.time(), {})
        for root in self.roots():
            taken = await anyio.to_thread.run_sync(snapshot_root, self, root)
            if isinstance(taken, str):
                window.notes.append(f"[no checkpoint of {root}: {taken}]")
            elif taken is not None:
                window.trees[root], window.left_out[root] = taken
        return window

    async def after_command(self, window: CommandWindow | None) -> list[Checkpoint]:
        """The command's checkpoints; what could not be recorded goes to window.notes."""
        if window is None:
            return []
        made = []
        for root, before in window.trees.items():
            checkpoint = await anyio.to_thread.run_sync(finish_command, self, root, before, window)
            if checkpoint is not None:
                made.append(checkpoint)
        if made:
            self._schedule_trim()
        return made

    # -- writers ----------------------------------------------------------------------

    async def before_write(
        self,
        call_id: str,
        session: str,
        tool: str,
        moves: list[tuple[Path, Path | None]],
        reads: Reads = "editor",
        reverts: str | None = None,
    ) -> WriteWindow | None:
        if not self.enabled:
            return None
        paths = paths_of(moves)
        if not any(self.root_of(path) for path in paths):
            return None
        window = WriteWindow(call_id, session, tool, time.time(), moves, {}, reads, reverts)
        try:
            for path in paths:
                window.before[path] = await self._store_state(path, window)
        except (OSError, ShadowError) as exc:
            # The write matters more than its checkpoint: it goes ahead, unrecorded.
            log.exception("checkpoint of %s (before) failed", call_id)
            self._failed[call_id] = (
                f"recording the files before the write failed ({str(exc).strip()})"
            )
            await anyio.to_thread.run_sync(self._drop_pending, window)
            return None
        return window

    def take_failure(self, call_id: str) -> str | None:
        """Why a writer's checkpoint failed (once), for its result; None when it did not."""
        return self._failed.pop(call_id, None)

    async def after_write(self, window: WriteWindow | None) -> list[Checkpoint]:
        if window is None:
            return []
        try:
            return await self._record_write(window)
        except (OSError, ShadowError) as exc:
            self._failed[window.call_id] = f"recording the change failed ({str(exc).strip()})"
            log.exception("checkpoint of %s (after) failed", window.call_id)
            return []
        finally:
            await anyio.to_thread.run_sync(self._drop_pending, window)

    async def _record_write(self, window: WriteWindow) -> list[Checkpoint]:
        after = {path: await self._store_state(path, window) for path in window.before}
        records: dict[Path, list[FileRecord]] = {}
        taken: set[Path] = set()
        for source, destination in window.moves:
            root = self.root_of(source)
            if root is None:
                continue
            if destination is not None and window.before[source] is not None:
                moved = moved_record(root, source, destination, window.before, after)
                if moved is not None:
                    records.setdefault(root, []).append(moved)
                    taken |= {source, destination}
        for path, old in window.before.items():
            root = self.root_of(path)
            if root is None or path in taken:
                continue
            record = file_record(relative(root, path), old, after[path])
            if record is not None:
                records.setdefault(root, []).append(record)
        made = []
        for root, files in records.items():
            made.append(await anyio.to_thread.run_sync(self._add_files, root, window, files))
        if made:
            self._schedule_trim()
        return made

    def _add_files(self, root: Path, window: WriteWindow, files: list[FileRecord]) -> Checkpoint:
        store = self.store(root)
        self.note_growth(root, (f.source or f.path for f in files))
        with self.root_lock(root), store.repo.locked():
            store.ensure()
            return store.add(
                window.call_id,
                window.session,
                window.tool,
                window.started,
                files,
                reads=window.reads,
                reverts=window.reverts,
            )

    async def _store_state(self, path: Path, window: WriteWindow) -> Entry | None:
        """The path's current content, stored in its root's shadow repository."""
        root = self.root_of(path)
        if root is None:
            return None
        current = await self.current(path, window.reads)
        return await anyio.to_thread.run_sync(self._store_blob, root, path, current, window)

    def _store_blob(
        self, root: Path, path: Path, current: Current, window: WriteWindow
    ) -> Entry | None:
        if current is None or current.mode == stat.S_IFDIR:
            return None
        store = self.store(root)
        with self.root_lock(root):
            store.ensure()
            if current.data is None:  # over the size limit: only the pointer
                size, oid = large_identity(path)
                store.repo.write_pointer(size, oid)
            else:
                objects.write_blob(store.repo.git_dir, current.data)
            name = f"pending-{id(window):x}-{current.oid}"
            store.repo.keep(name, {current.oid: 0o100644})
            window.pending.append((root, name))
        return Entry(current.oid, current.mode)

    def _drop_pending(self, window: WriteWindow) -> None:
        for root, name in window.pending:
            with self.root_lock(root):
                self.store(root).repo.drop(name)
        window.pending.clear()

    # -- reading the workspace ----------------------------------------------------------

    async def current(self, path: Path, reads: Reads) -> Current:
        """What `path` holds now: with reads "editor", the editor's buffer when it is open
        there (read on the event loop, where buffers live); else the disk (in a thread)."""
        if reads == "editor" and self.documents is not None:
            document = self.documents.open_document(path)
            if document is not None:
                data = textio.encode_like(document.text, document.encoding, document.bom)
                return Present.of(data, git_mode(path) or 0o100644)
        return await anyio.to_thread.run_sync(disk_state, path, self.config.max_file_bytes)

    # -- listing -----------------------------------------------------------------------

    async def listed(self, session: str | None = None, limit: int = 50) -> list[Listed]:
        """Newest first."""
        if not self.enabled:
            return []
        found: list[Listed] = []
        for root in self.roots():
            store = self.store(root)
            for checkpoint in await anyio.to_thread.run_sync(store.all):
                if session is None or checkpoint.session == session:
                    found.append(Listed(root, checkpoint))
        found.sort(key=lambda item: (item.checkpoint.ended, item.checkpoint.seq), reverse=True)
        return found[: max(limit, 0)]

    async def find(self, call_id: str) -> list[Listed]:
        found = []
        for root in self.roots():
            checkpoint = await anyio.to_thread.run_sync(self.store(root).find, call_id)
            if checkpoint is not None:
                found.append(Listed(root, checkpoint))
        return found

    # -- bounds -------------------------------------------------------------------------

    def bounds(self) -> Bounds:
        return Bounds(
            max_age_seconds=self.config.max_age_days * 86400,
            budget_bytes=self.config.budget_mb * 1024 * 1024,
            max_checkpoints=self.config.max_checkpoints,
        )

    def _schedule_trim(self) -> None:
        """Trim after the first checkpoint, then after every TRIM_EVERY: measuring the
        repository costs about as much as a snapshot, and one checkpoint adds little."""
        self._since_trim += 1
        if self._since_trim < TRIM_EVERY and self._trimmed_once and not self._grown():
            return
        self._since_trim = 0
        self._grown_bytes = 0
        self._trimmed_once = True
        if self._trim is not None and not self._trim.done():
            self._trim_again = True
            return
        self._trim = asyncio.get_running_loop().create_task(self._run_trim())

    def note_growth(self, root: Path, paths: Iterable[str]) -> None:
        """Count the bytes a checkpoint may have added (the changed files' sizes)."""
        for rel in paths:
            with contextlib.suppress(OSError):
                self._grown_bytes += (root / rel).lstat().st_size

    def _grown(self) -> bool:
        return self._grown_bytes > self.config.budget_mb * 1024 * 1024 // 8

    async def _run_trim(self) -> None:
        while True:
            self._trim_again = False
            for root in list(self._stores):
                try:
                    await anyio.to_thread.run_sync(self.trim_root, root)
                except Exception:
                    log.exception("trimming the checkpoints of %s failed", root)
            if not self._trim_again:
                return

    def trim_root(self, root: Path) -> int:
        store = self.store(root)
        with self.root_lock(root), store.repo.locked():
            if not (store.repo.git_dir / "HEAD").exists():
                return 0
            return store.trim(self.bounds())

    async def settle(self) -> None:
        """Wait for trimming that is under way (tests, shutdown)."""
        while self._trim is not None and not self._trim.done():
            await asyncio.shield(self._trim)
