"""Writers' checkpoints between the call's answer and the shadow repository.

On the call's path a writer's checkpoint is one append to the root's journal (journal.py)
and a place in the queue, in the order the writes ended. One background task drains the
queue: per root, one batch at a time, in a worker thread under the root's lock and the
repository's file lock, it writes the batch's blobs and records (their `seq` in queue
order) and deletes the journal file the batch came from. It lets writes gather for up to
BATCH_WAIT before each batch: under many concurrent writers one pack, one record file and
one thread hop serve dozens of writes (and the packs to consolidate stay few). Whoever
reads checkpoints (listing, finding one to revert, shutdown) `flush`es first, which cuts
that wait short, so a write is seen the moment its call has answered.

A process that died left its journal unlocked: `recover` replays it (once per root and
process, at start or at the first use of the root), skipping what the dead process had
already recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import anyio

from lsp_server.checkpoints import journal
from lsp_server.checkpoints.journal import ClosedJournal, JournalEntry, JournalFile
from lsp_server.checkpoints.records import Checkpoint, CheckpointStore, kept_oids, root_key
from lsp_server.checkpoints.shadow import objects

log = logging.getLogger(__name__)

BATCH_WAIT = 0.1
"""Seconds the queue lets writes gather before it writes a batch (a reader's flush, a
command's end, does not wait for it)."""


def write_entries(store: CheckpointStore, entries: list[JournalEntry]) -> list[Checkpoint]:
    """One pack of the batch's blobs and the tree its ref keeps, the ref, then the records
    in order (blocking; the caller holds the repository's locks). A crash in between leaves
    no record without its objects."""
    if not entries:
        return []
    pointers = store.repo.large.pointer_oids()
    new_pointers: set[str] = set()
    blobs: dict[str, bytes] = {}
    kept: dict[str, int] = {}
    for entry in entries:
        blobs.update(entry.blobs)
        new_pointers |= entry.pointers - pointers
        kept.update(kept_oids(entry.files))
    tree = objects.flat_tree({oid: (mode, oid) for oid, mode in kept.items()})
    objects.write_pack(
        store.repo.git_dir, [*(("blob", data) for data in blobs.values()), ("tree", tree)]
    )
    if new_pointers:
        store.repo.large.remember_pointers(new_pointers)
        pointers |= new_pointers
    first = store.next_seq()
    store.keep_batch(first, first + len(entries) - 1, objects.object_id("tree", tree))
    made = [
        store.checkpoint_of(
            first + n,
            entry.call_id,
            entry.session,
            entry.tool,
            entry.started,
            entry.ended,
            entry.files,
            pointers,
            reads=entry.reads,
            reverts=entry.reverts,
            agent=entry.agent,
        )
        for n, entry in enumerate(entries)
    ]
    store.add_batch(made)
    return made


class WriteQueue:
    def __init__(
        self,
        store: Callable[[Path], CheckpointStore],
        root_lock: Callable[[Path], threading.Lock],
        on_recorded: Callable[[Path, list[Checkpoint]], None],
    ) -> None:
        self._store = store
        self._root_lock = root_lock
        self._on_recorded = on_recorded
        self._lock = threading.Lock()
        self._journals: dict[Path, JournalFile] = {}
        self._queued: dict[Path, list[JournalEntry]] = {}
        self._recovered: set[Path] = set()
        self._ready: set[Path] = set()
        self._task: asyncio.Task[None] | None = None
        self._hurry = asyncio.Event()  # a reader waits: no more gathering

    # -- the call's path -------------------------------------------------------------------

    def record(self, root: Path, entry: JournalEntry) -> None:
        """Journal and queue one writer's checkpoint (blocking: a worker thread)."""
        data = journal.encode(entry)
        with self._lock:  # journal order == queue order == seq order
            found = self._journals.get(root)
            if found is None:
                found = self._journals[root] = JournalFile(self._store(root).folder)
            found.append(data)
            self._queued.setdefault(root, []).append(entry)

    async def ready(self, roots: Iterable[Path]) -> None:
        """Create each root's shadow repository at its first write in this process, so that
        one that cannot be is said in that call's result (ShadowError); later writes only
        append to the journal."""
        for root in roots:
            if root not in self._ready:
                await anyio.to_thread.run_sync(self._create, root)
                self._ready.add(root)

    def _create(self, root: Path) -> None:
        store = self._store(root)
        if store.repo.exists():  # no wait for a first snapshot under way (first_snapshot.py)
            return
        with self._root_lock(root), store.repo.locked():
            store.ensure()

    def kick(self) -> None:
        """Start draining (on the event loop, after `record`)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def flush(self, roots: Iterable[Path] = ()) -> None:
        """Wait until every queued checkpoint is in its repository and the journals that
        `roots` inherited from dead processes are replayed."""
        for root in roots:
            if root not in self._recovered:
                await anyio.to_thread.run_sync(self.recover, root)
        while self._task is not None and not self._task.done():
            self._hurry.set()
            await asyncio.shield(self._task)

    # -- the background side -----------------------------------------------------------

    async def _drain(self) -> None:
        while True:
            if not self._hurry.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._hurry.wait(), BATCH_WAIT)
            with self._lock:
                roots = [root for root, queued in self._queued.items() if queued]
            if not roots:
                self._hurry.clear()
                return
            for root in roots:
                try:
                    if root not in self._recovered:
                        await anyio.to_thread.run_sync(self.recover, root)
                    made = await anyio.to_thread.run_sync(self._write_batch, root)
                except Exception:
                    # The journal file stays: the next start replays it.
                    log.exception("writing the checkpoints of %s failed", root)
                    continue
                self._on_recorded(root, made)

    def _write_batch(self, root: Path) -> list[Checkpoint]:
        with self._lock:
            entries = self._queued.pop(root, [])
            closed = self._journals[root].rotate() if root in self._journals else None
        if not entries:
            if closed is not None:
                closed.remove()
            return []
        store = self._store(root)
        try:
            with self._root_lock(root), store.repo.locked():
                if not store.repo.exists() or not (store.folder / "records").is_dir():
                    store.ensure()  # (in full it reads the mount table: not at every batch)
                made = write_entries(store, entries)
                if closed is not None:
                    closed.remove()
        finally:
            if closed is not None:
                closed.release()
        return made

    def recover(self, root: Path) -> int:
        """Replay the journals dead processes left for `root` (blocking); how many
        checkpoints that recorded."""
        store = self._store(root)
        with self._root_lock(root):
            if root in self._recovered:
                return 0
            count = 0
            own = self._journals.get(root)
            leftovers = [p for p in journal.journal_files(store.folder) if not _owned(own, p)]
            if leftovers:
                with store.repo.locked():
                    store.ensure()
                    known = {(c.call_id, c.ended) for c in store.all()}
                    for path in leftovers:
                        count += _replay(store, path, known)
            self._recovered.add(root)
        if count:
            log.info("checkpoints of %s: %d replayed from a journal left behind", root, count)
        return count

    def recover_in_background(self, roots: list[Path], folders: Path) -> None:
        """Replay, on a daemon thread, the journals dead processes left under `folders`
        (the state folder's checkpoints/); readers and writers wait for it (`flush`)."""
        left = [root for root in roots if journal.journal_files(folders / root_key(root))]
        if left:
            threading.Thread(
                target=lambda: [self.recover(root) for root in left],
                name="toolhost-checkpoint-journals",
                daemon=True,
            ).start()

    def close(self) -> None:
        """Release the open journals (their entries are in the repository: `flush` first)."""
        with self._lock:
            for found in self._journals.values():
                closed = found.rotate()
                if closed is not None:
                    closed.remove()


def _owned(own: JournalFile | None, path: Path) -> bool:
    return own is not None and own.owns(path)


def _replay(store: CheckpointStore, path: Path, known: set[tuple[str, float]]) -> int:
    with journal.leftover(path) as closed:
        if closed is None:
            return 0  # a live process holds it
        entries = _read_entries(closed)
        fresh = [e for e in entries if e.key not in known]
        write_entries(store, fresh)
        known.update(e.key for e in fresh)
        closed.remove()
        return len(fresh)


def _read_entries(closed: ClosedJournal) -> list[JournalEntry]:
    with contextlib.suppress(OSError):
        return journal.decode_all(closed.path.read_bytes())
    return []
