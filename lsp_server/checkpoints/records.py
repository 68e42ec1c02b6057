"""What each checkpoint changed, one JSON file per call beside the shadow repository.

<state folder>/checkpoints/<hash of the root>/
    git/ index large.json lock   the shadow repository (shadow.py)
    records/<seq>.json           one checkpoint: the call and the files it changed
    root                         the root's path, for people reading the folder

Bounds (`trim`): checkpoints older than the age limit or beyond the count go first, then,
while the repository is over the size budget, the oldest quarter at a time; objects no
checkpoint reaches are pruned. When the workspace alone is over the budget the repository
starts afresh (rotation), so the folder never grows past the budget for long.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Literal

import attrs
import cattrs

from lsp_server.checkpoints.shadow import ShadowError, ShadowRepo
from lsp_server.checkpoints.tree_changes import Entry

log = logging.getLogger(__name__)

Change = Literal["modified", "created", "deleted", "moved"]
Reads = Literal["disk", "editor"]


@attrs.frozen
class FileRecord:
    """One file a call changed: its state before and after (None: absent)."""

    path: str
    """Relative to the root, with "/"."""
    change: Change
    before: Entry | None
    after: Entry | None
    source: str | None = None
    """The old path of a moved file."""
    not_stored: bool = False
    """Over the size limit: recorded by size and hash only, so it cannot be restored."""


@attrs.frozen
class Checkpoint:
    seq: int
    call_id: str
    session: str
    tool: str
    time: float
    """When the call started (seconds since the epoch)."""
    ended: float
    files: tuple[FileRecord, ...]
    reads: Reads = "editor"
    """disk: recorded from snapshots of the disk (shell commands), so a revert compares with
    and writes the disk; editor: the exact files of a writer, read as the tools read them
    (open editor buffers first), and reverted the same way."""
    label: str = ""
    """The command, or a short summary, for lists."""
    reverts: str | None = None
    """For a revert: the call it undid."""

    @property
    def ref_name(self) -> str:
        return f"{self.seq:08d}"


@attrs.frozen
class Bounds:
    max_age_seconds: float
    budget_bytes: int
    max_checkpoints: int


_CONVERTER = cattrs.Converter()
LOOSE_OBJECTS_TO_PACK = 4096


def root_key(root: Path) -> str:
    return hashlib.sha256(str(root).encode()).hexdigest()[:24]


class CheckpointStore:
    """The checkpoints of one workspace root (blocking; the runtime calls it in threads)."""

    def __init__(self, state_folder: Path, root: Path, max_file_bytes: int) -> None:
        self.folder = state_folder / "checkpoints" / root_key(root)
        self.root = root
        self.repo = ShadowRepo(self.folder, root, max_file_bytes)
        self._records = self.folder / "records"

    def ensure(self) -> None:
        self.repo.ensure()
        self._records.mkdir(parents=True, exist_ok=True)
        marker = self.folder / "root"
        if not marker.exists():
            marker.write_text(str(self.root) + "\n")

    # -- records --------------------------------------------------------------------

    def add(
        self,
        call_id: str,
        session: str,
        tool: str,
        started: float,
        files: list[FileRecord],
        reads: Reads = "editor",
        label: str = "",
        reverts: str | None = None,
    ) -> Checkpoint:
        pointers = self.repo.pointer_oids()
        files = [
            attrs.evolve(record, not_stored=True)
            if any(e is not None and e.oid in pointers for e in (record.before, record.after))
            else record
            for record in files
        ]
        checkpoint = Checkpoint(
            seq=self._next_seq(),
            call_id=call_id,
            session=session,
            tool=tool,
            time=started,
            ended=time.time(),
            files=tuple(files),
            reads=reads,
            label=label,
            reverts=reverts,
        )
        keep: dict[str, int] = {}
        for record in files:
            for entry in (record.before, record.after):
                if entry is not None and not entry.is_gitlink:
                    keep[entry.oid] = 0o100644
        self.repo.keep(checkpoint.ref_name, keep)
        data = json.dumps(_CONVERTER.unstructure(checkpoint), indent=1)
        temp = self._records / f".{checkpoint.ref_name}.tmp"
        temp.write_text(data)
        temp.replace(self._records / f"{checkpoint.ref_name}.json")
        return checkpoint

    def _next_seq(self) -> int:
        names = [p.stem for p in self._records.glob("*.json")]
        return max((int(n) for n in names if n.isdigit()), default=0) + 1

    def all(self) -> list[Checkpoint]:
        """Oldest first; unreadable records are skipped (and logged)."""
        found = []
        for path in sorted(self._records.glob("*.json")):
            try:
                found.append(_CONVERTER.structure(json.loads(path.read_text()), Checkpoint))
            except (OSError, ValueError, cattrs.BaseValidationError):
                log.warning("unreadable checkpoint record %s skipped", path)
        return found

    def find(self, call_id: str) -> Checkpoint | None:
        for checkpoint in reversed(self.all()):
            if checkpoint.call_id == call_id:
                return checkpoint
        return None

    def drop(self, checkpoint: Checkpoint) -> None:
        (self._records / f"{checkpoint.ref_name}.json").unlink(missing_ok=True)
        self.repo.drop(checkpoint.ref_name)

    # -- bounds ---------------------------------------------------------------------

    def trim(self, bounds: Bounds, now: float | None = None) -> int:
        """Apply the bounds; returns how many checkpoints were dropped."""
        now = time.time() if now is None else now
        checkpoints = self.all()
        dropped = 0
        while checkpoints and (
            now - checkpoints[0].ended > bounds.max_age_seconds
            or len(checkpoints) > bounds.max_checkpoints
        ):
            self.drop(checkpoints.pop(0))
            dropped += 1
        if dropped or self.repo.object_counts().get("count", 0) > LOOSE_OBJECTS_TO_PACK:
            self.repo.prune()  # also packs: many loose objects slow every git command
        while (size := self.repo.size_bytes()) > bounds.budget_bytes:
            if not checkpoints:
                self.rotate(size)
                return dropped
            batch = max(1, len(checkpoints) // 4)
            for checkpoint in checkpoints[:batch]:
                self.drop(checkpoint)
            checkpoints = checkpoints[batch:]
            dropped += batch
            self.repo.prune()
        return dropped

    def rotate(self, size: int) -> None:
        """Start the repository afresh (the workspace itself is over the budget): snapshots
        stay off until the budget is larger than what the workspace needed."""
        log.warning(
            "checkpoints of %s: the workspace alone is over the size budget; the shadow "
            "repository starts afresh",
            self.root,
        )
        for name in ("git", "index", "large.json", "records"):
            target = self.folder / name
            if target.is_dir():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)
        self.repo = ShadowRepo(self.folder, self.root, self.repo.max_file_bytes)
        self.ensure()
        (self.folder / "over-budget").write_text(f"{size}\n")

    def snapshots_fit(self, budget_bytes: int) -> bool:
        """False when the workspace alone needed more than the budget last time."""
        try:
            needed = int((self.folder / "over-budget").read_text())
        except (OSError, ValueError):
            return True
        return budget_bytes > needed

    def size_bytes(self) -> int:
        try:
            return self.repo.size_bytes()
        except ShadowError:
            return 0
