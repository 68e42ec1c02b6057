"""toolhost/revert: put back what one call changed, never over what someone changed since.

Files the call recorded from the editor's view are read and written through the editor's
buffers when open (workspace/applyEdit: one undo step, the user's other unsaved text stays);
everything else on disk, atomically, with its mode. The revert is itself a checkpoint, so it
can be reverted in turn.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import uuid
from pathlib import Path

import anyio
import attrs

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.records import Checkpoint, FileRecord
from lsp_server.checkpoints.restore import Put, Refusal, decide
from lsp_server.checkpoints.windows import Listed
from lsp_server.protocol import (
    CheckpointFile,
    CheckpointInfo,
    CheckpointsParams,
    CheckpointsResult,
    RevertConflict,
    RevertParams,
    RevertResult,
)
from lsp_server.runtime.core import errors
from lsp_server.runtime.core.errors import ToolError
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.fs import textio
from lsp_server.runtime.results.tool_output import FileChange
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

    def summary(self) -> str:
        lines = [f"Reverted {len(self.reverted)} file(s) of call {self.call_id}."]
        lines += [f"  {path}" for path in self.reverted]
        if self.conflicts:
            lines.append(f"Not reverted ({len(self.conflicts)}): changed since the call:")
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

    async def revert(self, call_id: str, session: str = "default") -> RevertOutcome:
        found = await self.checkpoints.find(call_id)
        if not found:
            raise ToolError(
                errors.CHECKPOINT_UNKNOWN,
                f"no checkpoint of a call {call_id!r} (it changed no file, or was dropped by "
                "the checkpoint bounds)",
                "list the checkpoints with toolhost/checkpoints (CLI: toolhost checkpoints)",
            )
        outcome = RevertOutcome(call_id)
        own_id = f"revert-{uuid.uuid4().hex[:10]}"
        for listed in found:
            await self._revert_one(listed, outcome, own_id, session)
        return outcome

    async def _revert_one(
        self, listed: Listed, outcome: RevertOutcome, own_id: str, session: str
    ) -> None:
        root, checkpoint = listed.root, listed.checkpoint
        paths = _paths(root, checkpoint.files)
        async with self.locks.hold(paths):
            now = {
                _rel(root, p): await self.checkpoints.current(p, checkpoint.reads) for p in paths
            }
            store = self.checkpoints.store(root)
            oids = [e.oid for r in checkpoint.files for e in (r.before, r.after) if e is not None]
            blobs = await anyio.to_thread.run_sync(store.repo.read_blobs, oids)
            puts: list[Put] = []
            for record in checkpoint.files:
                decision = decide(record, now, blobs, store.repo.merge)
                if isinstance(decision, Refusal):
                    outcome.conflicts.append(
                        Conflict(self._display(root, decision.path), decision.reason, decision.diff)
                    )
                elif decision:
                    puts.extend(decision)
            if not puts:
                return
            moves: list[tuple[Path, Path | None]] = [(root / put.path, None) for put in puts]
            window = await self.checkpoints.before_write(
                own_id, session, "revert", moves, checkpoint.reads, reverts=checkpoint.call_id
            )
            try:
                for put in puts:
                    if await self._apply(root, put, checkpoint, outcome):
                        outcome.reverted.append(self._display(root, put.path))
            finally:
                if await self.checkpoints.after_write(window):
                    outcome.checkpoint = own_id

    def _display(self, root: Path, path: str) -> str:
        return self.checkpoints.workspace.relative(root / path)

    async def _apply(
        self, root: Path, put: Put, checkpoint: Checkpoint, outcome: RevertOutcome
    ) -> bool:
        path = root / put.path
        # Compare and swap: the path must still hold what the decision was made on.
        if await self.checkpoints.current(path, checkpoint.reads) != put.current:
            outcome.conflicts.append(
                Conflict(self._display(root, put.path), "changed while the revert ran", "")
            )
            return False
        if checkpoint.reads == "editor" and await self._through_editor(path, put):
            return True
        await anyio.to_thread.run_sync(write_disk, path, put)
        return True

    async def _through_editor(self, path: Path, put: Put) -> bool:
        """Open buffers get the change through the editor; False when not open."""
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
            await anyio.to_thread.run_sync(_set_exec_bit, path, put.mode)
        return True


def write_disk(path: Path, put: Put) -> None:
    """Make the disk hold `put` (blocking): atomic replace, symlink, or removal."""
    if put.data is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if put.mode == 0o120000:
        temp = Path(tempfile.mktemp(prefix=f".{path.name}.", dir=path.parent))
        temp.symlink_to(os.fsdecode(put.data))
        temp.replace(path)
        return
    textio.atomic_write(path, put.data, _permissions(path, put.mode))


def _permissions(path: Path, git_mode: int) -> int:
    """The file's own permission bits with the executable bits git records set or cleared."""
    try:
        st = os.lstat(path)
        bits = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None
    except OSError:
        bits = None
    if bits is None:
        bits = textio.new_file_mode()
    if git_mode == 0o100755:
        return bits | ((bits & 0o444) >> 2)
    return bits & ~0o111


def _set_exec_bit(path: Path, git_mode: int) -> None:
    with contextlib.suppress(OSError):
        wanted = _permissions(path, git_mode)
        if stat.S_IMODE(path.stat().st_mode) != wanted:
            path.chmod(wanted)


def _paths(root: Path, records: tuple[FileRecord, ...]) -> list[Path]:
    paths: list[Path] = []
    for record in records:
        for rel in (record.path, record.source):
            if rel is not None and root / rel not in paths:
                paths.append(root / rel)
    return paths


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


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
            )
        )
    return CheckpointsResult(checkpoints=infos)


async def revert_request(
    checkpoints: Checkpoints, files: FileService, locks: FileLocks, params: RevertParams
) -> RevertResult:
    outcome = await Reverter(checkpoints, files, locks).revert(params.call_id, params.session)
    return RevertResult(
        reverted=outcome.reverted,
        conflicts=[RevertConflict(c.path, c.reason, c.diff) for c in outcome.conflicts],
        checkpoint=outcome.checkpoint,
        text=outcome.summary(),
    )
