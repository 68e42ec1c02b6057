"""Checkpoints of calls that change the workspace (a service; safety.md §10).

- A writer: dispatch records the exact files of its WritePlan before it publishes and after
  (`before_write` / `after_write`), as the tools read them (editor buffers included), or as
  the publish of a replace hands them over (write_states.py): one journal append on the
  call's path; the shadow repository gets them in background batches (write_queue.py), and
  whoever reads checkpoints flushes those first.
- A bash command that is not plainly read-only, foreground or background: every root is
  snapshotted before it starts and when it ends, exits or is killed (`before_command` /
  `after_command`); the difference is what it changed. Git work runs in worker threads,
  one at a time per root; trimming runs after the call, off its path (`settle` waits).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Collection, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from lsp_server.checkpoints.command_snapshots import CommandSnapshots
from lsp_server.checkpoints.file_states import Lstats, paths_of, small_lstats, write_records
from lsp_server.checkpoints.journal import JournalEntry
from lsp_server.checkpoints.records import Bounds, Checkpoint, CheckpointStore, Reads
from lsp_server.checkpoints.restore import Current
from lsp_server.checkpoints.shadow.isolated_git import ShadowError
from lsp_server.checkpoints.shadow.tree_changes import Entry
from lsp_server.checkpoints.sharing import side_files
from lsp_server.checkpoints.watching.root_watchers import RootWatchers
from lsp_server.checkpoints.windows import CommandWindow, Listed, WriteWindow
from lsp_server.checkpoints.write_queue import WriteQueue
from lsp_server.checkpoints.write_states import (
    PublishedStates,
    StateReader,
    editor_states,
    reported_paths,
    take_checked,
)
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.fs.workspace import Workspace
from lsp_server.procs.daemon_threads import on_daemon_thread

if TYPE_CHECKING:
    from lsp_server.runtime.file_service import DocumentSource

log = logging.getLogger(__name__)

TRIM_EVERY = 16
# The size bounds need git (count-objects): measured every MEASURE_EVERY checkpoints, or
# sooner when the changed files add up to an eighth of the budget.
MEASURE_EVERY = 128
INLINE_BYTES = 256 * 1024  # as FileService's INLINE_READ_BYTES


class Checkpoints:
    def __init__(
        self,
        workspace: Workspace,
        config: CheckpointsConfig,
        state_folder: Path | None,
        *,
        documents: DocumentSource | None = None,
        keep_out: Sequence[Path] = (),
    ) -> None:
        """`keep_out`: toolhost's folders beside the state folder (its config ...); none of
        them is recorded or watched where a root holds them (an allowed home folder)."""
        self.workspace = workspace
        self.config = config
        self.state_folder = state_folder
        self.keep_out = (*([state_folder] if state_folder else []), *keep_out)
        self._stores: dict[Path, CheckpointStore] = {}
        self._locks: dict[Path, threading.Lock] = {}
        self._stores_lock = threading.Lock()
        self._trim: asyncio.Task[None] | None = None
        self._trim_again, self._since_trim = False, 0
        self._trimmed_once = False
        self._grown_bytes, self._since_measure, self._measure = 0, 0, False
        self.documents: DocumentSource | None = documents
        self._failed: dict[str, str] = {}
        self.watchers = RootWatchers.for_config(config, self.keep_out)  # changes since snapshots
        self._commands = CommandSnapshots(
            self.store, self.root_lock, config, self.watchers, self.note_growth
        )
        self._queue = WriteQueue(self.store, self.root_lock, self._recorded)
        if self.enabled and state_folder is not None:  # a dead process's journals; git indexes
            self._queue.recover_in_background(self.roots(), state_folder / "checkpoints")
            self._commands.prepare_in_background(self.roots())

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
                store = CheckpointStore(
                    self.state_folder, root, self.config.max_file_bytes, self.keep_out
                )
                store.repo.regenerable = tuple(self._commands.regenerable(root))
                self._stores[root] = store
                self._locks[root] = threading.Lock()
            return store

    def root_of(self, path: Path) -> Path | None:
        """The root `path` is in (compared as text: `path.parents` cost 13 us a call)."""
        text = str(path)
        for root in self.roots():
            prefix = str(root)
            if text == prefix or text.startswith(prefix.rstrip("/") + "/"):
                return root
        return None

    def root_lock(self, root: Path) -> threading.Lock:
        self.store(root)
        return self._locks[root]

    def status(self) -> dict[str, Any]:  # toolhost/status: roots and watches
        return self._commands.report(self.roots() if self.enabled else [])

    # -- commands (command_snapshots.py does the work) ----------------------------------

    async def before_command(
        self, call_id: str, session: str, tool: str, label: str
    ) -> CommandWindow | None:
        if not self.enabled:
            return None
        window = CommandWindow(call_id, session, tool, label, time.time(), {})
        for root in self.roots():
            store, begin = self.store(root), side_files.begin  # listed as running
            window.first_seqs[root] = await anyio.to_thread.run_sync(begin, store, window)
            taken = await anyio.to_thread.run_sync(self._commands.before, root)
            window.notes += self._commands.take_notes(root)
            if isinstance(taken, str):
                window.notes.append(f"[no checkpoint of {root}: {taken}]")
            elif taken is not None:
                window.trees[root], window.left_out[root] = taken
        return window

    async def after_command(self, window: CommandWindow | None) -> list[Checkpoint]:
        """The command's checkpoints; what could not be recorded goes to window.notes."""
        if window is None:
            return []
        await self._queue.flush()  # the writers' records of its window, to tell theirs apart
        made = []
        for root, before in window.trees.items():
            checkpoint = await anyio.to_thread.run_sync(self._commands.after, root, before, window)
            if checkpoint is not None:
                made.append(checkpoint)
        for root in window.first_seqs:
            await anyio.to_thread.run_sync(side_files.end, self.store(root), window.call_id)
        if made:
            self._schedule_trim()
        return made

    async def note_save(self, path: Path) -> None:
        """An editor saved `path` (didSave): what it wrote is the user's (sharing/)."""
        if self.enabled and (root := self.root_of(path)) is not None:
            note, limit = side_files.note_save_of, self.config.max_file_bytes
            await anyio.to_thread.run_sync(note, self.store(root).folder, root, path, limit)

    # -- writers (the call's path: the states and one journal append; write_queue.py does
    # the git side in the background) --------------------------------------------------

    async def before_write(
        self,
        call_id: str,
        session: str,
        tool: str,
        moves: list[tuple[Path, Path | None]],
        reads: Reads = "editor",
        reverts: str | None = None,
        *,
        reported: Collection[Path] = (),
    ) -> WriteWindow | None:
        """`reported`: paths whose publish hands their states over (`witness`), not read
        here; the caller passes the witness to the publish."""
        if not self.enabled:
            return None
        paths = paths_of(moves)
        if not any(self.root_of(path) for path in paths):
            return None
        window = WriteWindow(call_id, session, tool, time.time(), moves, {}, reads, reverts)
        window.pending = reported_paths(moves, reported, self.root_of, INLINE_BYTES)
        try:
            read = [path for path in paths if path not in window.pending]
            window.before = await self._states(read, window)
        except OSError as exc:
            # The write matters more than its checkpoint: it goes ahead, unrecorded.
            log.exception("checkpoint of %s (before) failed", call_id)
            self._failed[call_id] = (
                f"recording the files before the write failed ({str(exc).strip()})"
            )
            return None
        return window

    def witness(self, window: WriteWindow | None) -> PublishedStates | None:
        """What the publish of `window`'s reported paths tells (FileService.publish)."""
        if window is None:
            return None

        def failed(why: str) -> None:
            self._failed[window.call_id] = why

        return PublishedStates(window, self._reader(), self.documents, failed)

    def _reader(self) -> StateReader:
        return StateReader(self.root_of, self.config.max_file_bytes)

    def take_failure(self, call_id: str) -> str | None:
        """Why a writer's checkpoint failed (once), for its result; None when it did not."""
        return self._failed.pop(call_id, None)

    async def after_write(self, window: WriteWindow | None) -> bool:
        """Journal the write's checkpoint; True when there is one (the call changed a file).
        It is in the shadow repository once `flush` returns."""
        if window is None or window.broken:
            return False
        try:
            take_checked(window)  # where a publish failed after its last check
            roots = {r for p in (*window.before, *window.pending) if (r := self.root_of(p))}
            await self._queue.ready(roots)
            unread = [p for p in (*window.before, *window.pending) if p not in window.after]
            editor = editor_states(self.documents, unread, window)
            stats = small_lstats(unread, editor, INLINE_BYTES)
            if stats is not None:
                recorded = self._journal_write(window, unread, editor, stats)
            else:
                journal = self._journal_write
                recorded = await anyio.to_thread.run_sync(journal, window, unread, editor, {})
        except (OSError, ShadowError) as exc:
            self._failed[window.call_id] = f"recording the change failed ({str(exc).strip()})"
            log.exception("checkpoint of %s (after) failed", window.call_id)
            return False
        if recorded:
            self._grown_bytes += sum(len(data) for data in window.blobs.values())
            self._queue.kick()
        return recorded

    def _journal_write(
        self, window: WriteWindow, unread: list[Path], editor: dict[Path, Current], stats: Lstats
    ) -> bool:
        """Read the after states not handed over, journal one entry per root (blocking)."""
        after = {**self._reader().read(unread, window, editor, stats), **window.after}
        for path in window.pending:  # the publish stopped before it changed the path
            window.before[path] = after[path]
        window.pending.clear()
        records = write_records(window.moves, window.before, after, self.root_of)
        ended = time.time()
        for root, files in records.items():
            oids = {e.oid for f in files for e in (f.before, f.after) if e and not e.is_gitlink}
            entry = JournalEntry(
                call_id=window.call_id,
                session=window.session,
                tool=window.tool,
                started=window.started,
                ended=ended,
                files=tuple(files),
                reads=window.reads,
                reverts=window.reverts,
                blobs={oid: window.blobs[oid] for oid in oids if oid in window.blobs},
                pointers=frozenset(oids & window.pointers),
                agent=window.agent,
            )
            self._queue.record(root, entry)
        return bool(records)

    async def _states(self, paths: list[Path], window: WriteWindow) -> dict[Path, Entry | None]:
        editor = editor_states(self.documents, paths, window)
        stats = small_lstats(paths, editor, INLINE_BYTES)
        if stats is not None:
            return self._reader().read(paths, window, editor, stats)
        return await anyio.to_thread.run_sync(self._reader().read, paths, window, editor, {})

    def _recorded(self, root: Path, made: list[Checkpoint]) -> None:
        if made:
            self._schedule_trim(len(made))

    # -- listing -----------------------------------------------------------------------

    async def listed(self, session: str | None = None, limit: int = 50) -> list[Listed]:
        """Newest first."""
        if not self.enabled:
            return []
        await self._queue.flush(self.roots())
        found: list[Listed] = []
        for root in self.roots():
            store = self.store(root)
            for checkpoint in await anyio.to_thread.run_sync(store.all):
                if session is None or checkpoint.session == session:
                    found.append(Listed(root, checkpoint))
        found.sort(key=lambda item: (item.checkpoint.ended, item.checkpoint.seq), reverse=True)
        return found[: max(limit, 0)]

    async def find(self, call_id: str) -> list[Listed]:
        if self.enabled:
            await self._queue.flush(self.roots())
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

    def _schedule_trim(self, made: int = 1) -> None:
        """Trim after the first checkpoint, then after every TRIM_EVERY: measuring the
        repository costs about as much as a snapshot, and one checkpoint adds little."""
        self._since_trim += made
        self._since_measure += made
        if self._since_trim < TRIM_EVERY and self._trimmed_once and not self._grown():
            return
        if self._since_measure >= MEASURE_EVERY or self._grown() or not self._trimmed_once:
            self._measure = True
            self._since_measure = 0
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
            measure, self._measure = self._measure, False
            for root in list(self._stores):
                try:
                    await on_daemon_thread(partial(self.trim_root, root, measure), "trim")
                except Exception:
                    log.exception("trimming the checkpoints of %s failed", root)
            if not self._trim_again:
                return

    def trim_root(self, root: Path, measure: bool = True) -> int:
        """Apply the bounds; `measure`: the size ones too (two git processes)."""
        store = self.store(root)
        with self.root_lock(root), store.repo.locked():
            if not store.repo.exists():
                return 0
            return store.trim(self.bounds(), measure=measure)

    async def settle(self, shutting_down: bool = False) -> None:
        """Wait for queued writers' checkpoints, dead processes' journals and trimming under
        way; `shutting_down`: the queue only (the rest waits for the next start; a trim runs
        on a daemon thread, so that a closing server leaves it)."""
        if self.enabled:
            await self._queue.flush(() if shutting_down else self.roots())
        if shutting_down and self._trim is not None:
            self._trim.cancel()  # (its git ends with the server: a repack may take minutes)
        while not shutting_down and self._trim and not self._trim.done():
            await asyncio.shield(self._trim)
