"""toolhost/revert: put back what one call changed, never over what someone changed since.

Files the call recorded from the editor's view are read and written through the editor's
buffers when open (workspace/applyEdit: one undo step, the user's other unsaved text stays);
everything else on disk, atomically, with its mode, beneath the root's open descriptor
(checkpoints/revert_disk.py): a link, hard link, FIFO or device in the way is a conflict,
never followed. The revert is itself a checkpoint, so it can be reverted in turn.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import anyio
import attrs

from lsp_server.checkpoints import revert_disk
from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.records import Checkpoint, FileRecord, Reads
from lsp_server.checkpoints.restore import (
    LINK_MODE,
    Blocked,
    Current,
    Present,
    Put,
    State,
    decide_all,
)
from lsp_server.checkpoints.sharing import attribution, side_files
from lsp_server.checkpoints.windows import Listed
from lsp_server.core import errors
from lsp_server.core.errors import ToolError
from lsp_server.core.tool_output import FileChange
from lsp_server.fs import textio
from lsp_server.protocol import (
    CheckpointFile,
    CheckpointInfo,
    CheckpointsParams,
    CheckpointsResult,
    RevertConflict,
    RevertParams,
    RevertResult,
)
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.sessions.observations import FileLocks


@attrs.frozen
class Conflict:
    path: str
    reason: str
    diff: str


@attrs.define
class RevertOutcome:
    call_id: str
    reverted: list[str] = attrs.Factory(list)
    conflicts: list[Conflict] = attrs.Factory(list)
    checkpoint: str | None = None
    """The call id under which the revert itself was recorded (revert it to redo)."""
    theirs: list[str] = attrs.Factory(list)
    """Files the call's snapshots saw change that another writer changed (checkpoints/
    sharing/attribution.py)."""

    def summary(self) -> str:
        lines = [f"Reverted {len(self.reverted)} file(s) of call {self.call_id}."]
        lines += [f"  {path}" for path in self.reverted]
        if self.theirs:
            lines.append(
                f"Left as they are, changed meanwhile by another writer ({len(self.theirs)}):"
            )
            lines += [f"  {line}" for line in self.theirs]
        if self.conflicts:
            # Changed since the call, or something a revert does not follow is in the way.
            lines.append(f"Not reverted ({len(self.conflicts)}):")
            lines += [f"  {c.path}: {c.reason}" for c in self.conflicts]
        if self.checkpoint:
            # Every face reverts by call id; the shell's command is one of them.
            lines.append(
                f"This revert is itself checkpoint {self.checkpoint}: revert that to undo it "
                f"(from a shell: toolhost revert {self.checkpoint})."
            )
        return "\n".join(lines)


class Reverter:
    def __init__(self, checkpoints: Checkpoints, files: FileService, locks: FileLocks) -> None:
        self.checkpoints = checkpoints
        self.files = files
        self.locks = locks

    async def revert(
        self, call_id: str, session: str = "default", include_shared: bool = False
    ) -> RevertOutcome:
        found = await self.checkpoints.find(call_id)
        if not found:
            raise ToolError(
                errors.CHECKPOINT_UNKNOWN,
                f"no checkpoint of a call {call_id!r} (it changed no file; or it ran while its "
                "root had no shell checkpoints, its first snapshot under way or the root over "
                "the budget, as its result said; or it was dropped by the checkpoint bounds)",
                "list the checkpoints with toolhost/checkpoints (CLI: toolhost checkpoints)",
            )
        outcome = RevertOutcome(call_id)
        own_id = f"revert-{uuid.uuid4().hex[:10]}"
        for listed in found:
            files = await self._own_files(listed, outcome, include_shared)
            await self._revert_one(listed, files, outcome, own_id, session)
        return outcome

    async def _own_files(
        self, listed: Listed, outcome: RevertOutcome, include_shared: bool
    ) -> tuple[FileRecord, ...]:
        """A command's files that are its own to revert: not one whose change another writer
        made, nor (unless `include_shared`) one another writer may hold a change in."""
        root, checkpoint = listed.root, listed.checkpoint
        if checkpoint.reads != "disk":  # a writer's change is exactly its own
            return checkpoint.files
        store = self.checkpoints.store(root)
        found = await anyio.to_thread.run_sync(
            lambda: attribution.verdicts(
                checkpoint,
                store.all(),
                side_files.running(store.folder),
                side_files.saves_since(store.folder, checkpoint.time),
            )
        )
        kept = []
        for record in checkpoint.files:
            verdict = found.get(record.path)
            shown = self._display(root, record.path)
            if verdict is None or (include_shared and not verdict.theirs):
                kept.append(record)
            elif verdict.theirs:
                outcome.theirs.append(f"{shown}: by {', '.join(verdict.names)}")
            else:
                outcome.conflicts.append(Conflict(shown, verdict.reason(), ""))
        return tuple(kept)

    async def _revert_one(
        self,
        listed: Listed,
        files: tuple[FileRecord, ...],
        outcome: RevertOutcome,
        own_id: str,
        session: str,
    ) -> None:
        root, checkpoint = listed.root, attrs.evolve(listed.checkpoint, files=files)
        rels = _rels(checkpoint.files)
        async with self.locks.hold(root / rel for rel in rels if revert_disk.plain_parts(rel)):
            now = await self._states(root, rels, checkpoint.reads)
            store = self.checkpoints.store(root)
            oids = [e.oid for r in checkpoint.files for e in (r.before, r.after) if e is not None]
            blobs = await anyio.to_thread.run_sync(store.repo.read_blobs, oids)
            puts, refusals = decide_all(checkpoint.files, now, blobs, store.repo.merge)
            for refusal in refusals:
                outcome.conflicts.append(
                    Conflict(self._display(root, refusal.path), refusal.reason, refusal.diff)
                )
            if not puts:
                return
            moves: list[tuple[Path, Path | None]] = [(root / put.path, None) for put in puts]
            window = await self.checkpoints.before_write(
                own_id, session, "revert", moves, checkpoint.reads, reverts=checkpoint.call_id
            )
            try:
                for put in puts:
                    refused = await self._apply(root, put, checkpoint)
                    if refused is None:
                        outcome.reverted.append(self._display(root, put.path))
                    else:
                        outcome.conflicts.append(
                            Conflict(self._display(root, put.path), refused, "")
                        )
            finally:
                if await self.checkpoints.after_write(window):
                    outcome.checkpoint = own_id

    def _display(self, root: Path, path: str) -> str:
        if revert_disk.plain_parts(path) is None:
            return path  # a recorded name that is not a plain path is shown as recorded
        return self.checkpoints.workspace.relative(root / path)

    @property
    def _max_bytes(self) -> int:
        return self.checkpoints.config.max_file_bytes

    async def _states(self, root: Path, rels: list[str], reads: Reads) -> dict[str, State]:
        """What each path holds now, as seen beneath the root (in a thread); with reads
        "editor", a buffer open in the editor stands for the disk (read on the event loop,
        where buffers live) when its path is reachable beneath the root."""
        states = await anyio.to_thread.run_sync(
            revert_disk.read_states, root, rels, self._max_bytes
        )
        if reads != "editor" or self.files.documents is None:
            return states
        for rel, state in states.items():
            if not isinstance(state, Blocked):
                buffered = self._buffer_state(root / rel, state)
                if buffered is not None:
                    states[rel] = buffered
        return states

    def _buffer_state(self, path: Path, disk: Current) -> Current:
        documents = self.files.documents
        document = documents.open_document(path) if documents is not None else None
        if document is None:
            return None
        data = textio.encode_like(document.text, document.encoding, document.bom)
        mode = disk.mode if disk is not None and disk.mode != LINK_MODE else 0o100644
        return Present.of(data, mode)

    async def _apply(self, root: Path, put: Put, checkpoint: Checkpoint) -> str | None:
        """Put one change in place; None when done, else why not (a conflict)."""
        if checkpoint.reads == "editor":
            # Compare and swap: the path must still hold what the decision was made on.
            [now] = (await self._states(root, [put.path], checkpoint.reads)).values()
            if isinstance(now, Blocked):
                return now.reason
            if now != put.current:
                return "changed while the revert ran"
            if await self._through_editor(root, put):
                return None
        return await anyio.to_thread.run_sync(revert_disk.apply, root, put, self._max_bytes)

    async def _through_editor(self, root: Path, put: Put) -> bool:
        """Open buffers get the change through the editor; False when not open."""
        path = root / put.path
        documents = self.files.documents
        buffer = documents.open_document(path) if documents is not None else None
        if buffer is None:
            return False
        if put.data is None:
            change = FileChange(path, buffer, None)
        else:
            try:
                text, _, _ = textio.decode(put.data)
            except textio.DecodeError:
                return False
            change = FileChange(path, buffer, text)
        await self.files.publish(change)
        if put.data is not None:
            await anyio.to_thread.run_sync(revert_disk.set_exec_bits, root, put.path, put.mode)
        return True


def _rels(records: tuple[FileRecord, ...]) -> list[str]:
    rels: list[str] = []
    for record in records:
        for rel in (record.path, record.source):
            if rel is not None and rel not in rels:
                rels.append(rel)
    return rels


# -- the two requests ---------------------------------------------------------------------


async def list_checkpoints(
    checkpoints: Checkpoints, params: CheckpointsParams
) -> CheckpointsResult:
    listed = await checkpoints.listed(params.session, params.limit)
    relative = checkpoints.workspace.relative
    infos = []
    for item in listed:
        cp = item.checkpoint
        files = [
            CheckpointFile(
                path=relative(item.root / f.path),
                change=f.change,
                from_path=relative(item.root / f.source) if f.source else None,
                not_stored=f.not_stored,
            )
            for f in cp.files
        ]
        label = cp.label or (f"revert of {cp.reverts}" if cp.reverts else "")
        infos.append(
            CheckpointInfo(
                call_id=cp.call_id,
                session=cp.session,
                tool=cp.tool,
                time=cp.time,
                files=files,
                label=label,
                reverts=cp.reverts,
                agent=cp.agent,
            )
        )
    return CheckpointsResult(checkpoints=infos)


async def revert_request(
    checkpoints: Checkpoints, files: FileService, locks: FileLocks, params: RevertParams
) -> RevertResult:
    outcome = await Reverter(checkpoints, files, locks).revert(
        params.call_id, params.session, params.include_shared
    )
    return RevertResult(
        reverted=outcome.reverted,
        conflicts=[RevertConflict(c.path, c.reason, c.diff) for c in outcome.conflicts],
        checkpoint=outcome.checkpoint,
        text=outcome.summary(),
    )
