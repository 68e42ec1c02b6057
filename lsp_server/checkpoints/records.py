"""What each checkpoint changed, one JSON file per call beside the shadow repository.

<state folder>/checkpoints/<hash of the root>/
    git/ index large.json lock   the shadow repository (shadow/)
    records/<seq>.json           one checkpoint: the call and the files it changed
    root                         the root's path, for people reading the folder

Bounds (`trim`): checkpoints older than the age limit or beyond the count go first, then,
while the repository is over the size budget, the oldest quarter at a time; objects no
checkpoint reaches are pruned. When the workspace alone is over the budget the repository
starts afresh (rotation), so the folder never grows past the budget for long.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import attrs
import cattrs

from lsp_server.checkpoints.record_ages import RecordAges, RecordFiles, plain_records
from lsp_server.checkpoints.shadow.isolated_git import ShadowError
from lsp_server.checkpoints.shadow.repository import ShadowRepo, size_of
from lsp_server.checkpoints.shadow.tree_changes import Entry
from lsp_server.checkpoints.sharing.attribution import OtherWriter
from lsp_server.home.replace_file import write_atomically

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
    others: tuple[OtherWriter, ...] = ()
    """For a shell command: the other writers of its paths while it ran (attribution.py)."""
    agent: str | None = None
    """The session's agent, as its face named it (MCP clientInfo, ACP, the editor)."""
    exact: bool = False
    """For a shell command: the kernel reported each writer (procs/process_writes.py): its
    files are what its own processes changed, and changes no other writer is known to have
    made, marked `both` in `others` (attribution.py), not all its window's changes."""

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
PACKS = 32  # writers' batches each add one (write_queue.py)


def kept_oids(files: Iterable[FileRecord]) -> dict[str, int]:
    """The objects a checkpoint's ref must keep (oid -> mode in the ref's tree)."""
    keep: dict[str, int] = {}
    for record in files:
        for entry in (record.before, record.after):
            if entry is not None and not entry.is_gitlink:
                keep[entry.oid] = 0o100644
    return keep


def root_key(root: Path) -> str:
    return hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:24]


class CheckpointStore:
    """The checkpoints of one workspace root (blocking; the runtime calls it in threads)."""

    def __init__(
        self, state_folder: Path, root: Path, max_file_bytes: int, keep_out: Sequence[Path] = ()
    ) -> None:
        """`keep_out`: toolhost's own folders beside the state folder (never recorded)."""
        self.folder = state_folder / "checkpoints" / root_key(root)
        self.root = root
        self.repo = ShadowRepo(self.folder, root, max_file_bytes, (state_folder, *keep_out))
        self._records = self.folder / "records"
        self._ages = RecordAges()

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
        others: tuple[OtherWriter, ...] = (),
        agent: str | None = None,
        exact: bool = False,
    ) -> Checkpoint:
        """Record one checkpoint (a shell command's): its own ref and record file."""
        checkpoint = self.checkpoint_of(
            self.next_seq(),
            call_id,
            session,
            tool,
            started,
            time.time(),
            files,
            self.repo.large.pointer_oids(),
            reads=reads,
            label=label,
            reverts=reverts,
        )
        checkpoint = attrs.evolve(checkpoint, others=others, agent=agent, exact=exact)
        self.repo.keep(checkpoint.ref_name, kept_oids(files))
        data = json.dumps(_CONVERTER.unstructure(checkpoint)).encode()
        write_atomically(self._records / f"{checkpoint.ref_name}.json", data)
        return checkpoint

    @staticmethod
    def checkpoint_of(
        seq: int,
        call_id: str,
        session: str,
        tool: str,
        started: float,
        ended: float,
        files: Iterable[FileRecord],
        pointers: set[str],
        reads: Reads = "editor",
        label: str = "",
        reverts: str | None = None,
        agent: str | None = None,
    ) -> Checkpoint:
        """The checkpoint as recorded: files whose states are pointers marked not stored."""
        return Checkpoint(
            seq=seq,
            call_id=call_id,
            session=session,
            tool=tool,
            time=started,
            ended=ended,
            files=tuple(
                attrs.evolve(record, not_stored=True)
                if any(e is not None and e.oid in pointers for e in (record.before, record.after))
                else record
                for record in files
            ),
            reads=reads,
            label=label,
            reverts=reverts,
            agent=agent,
        )

    def add_batch(self, checkpoints: list[Checkpoint]) -> None:
        """Record consecutive checkpoints (a batch of writers, kept by `keep_batch`) in one
        file, `<first>-<last>.jsonl`: one file per batch instead of one per checkpoint."""
        lines = [json.dumps(_CONVERTER.unstructure(c)).encode() + b"\n" for c in checkpoints]
        name = f"{checkpoints[0].seq:08d}-{checkpoints[-1].seq:08d}.jsonl"
        write_atomically(self._records / name, b"".join(lines))

    def _named(self) -> RecordFiles:
        """(first seq, last seq, name) of every record file, oldest first: `<seq>.json`
        holds one checkpoint, `<first>-<last>.jsonl` the consecutive ones of a batch. Names
        only: each batch and each trim lists them all (a Path each cost more than the rest)."""
        found = []
        with contextlib.suppress(FileNotFoundError):
            for name in os.listdir(self._records):  # noqa: PTH208 (names, not Paths)
                stem, _, kind = name.partition(".")
                first, _, last = stem.partition("-")
                if kind == "json" and stem.isdigit():
                    found.append((int(stem), int(stem), name))
                elif kind == "jsonl" and first.isdigit() and last.isdigit():
                    found.append((int(first), int(last), name))
        return sorted(found)

    def _files(self) -> list[tuple[int, int, Path]]:
        """`_named`, with each file's path."""
        return [(first, last, self._records / name) for first, last, name in self._named()]

    def next_seq(self) -> int:
        return max((last for _, last, _ in self._named()), default=0) + 1

    def all(self) -> list[Checkpoint]:
        """Oldest first; unreadable records are skipped (and logged)."""
        return [c for _, _, path in self._files() for c in self._read(path)]

    def since(self, seq: int) -> list[Checkpoint]:
        """The checkpoints numbered `seq` or later, oldest first (reading only their files)."""
        return [
            c
            for _, last, name in self._named()
            if last >= seq
            for c in self._read(self._records / name)
            if c.seq >= seq
        ]

    def _read(self, path: Path) -> list[Checkpoint]:
        found = []
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        for line in data.splitlines() if path.suffix == ".jsonl" else [data]:
            try:
                found.append(_CONVERTER.structure(json.loads(line), Checkpoint))
            except (ValueError, cattrs.BaseValidationError):
                log.warning("unreadable checkpoint record in %s skipped", path)
        return found

    def find(self, call_id: str) -> Checkpoint | None:
        for checkpoint in reversed(self.all()):
            if checkpoint.call_id == call_id:
                return checkpoint
        return None

    # -- bounds ---------------------------------------------------------------------

    def trim(self, bounds: Bounds, now: float | None = None, *, measure: bool = True) -> int:
        """Apply the bounds (`measure`: the size budget and repacking too, which need git);
        returns how many checkpoints were dropped.

        Records are counted by name and only the oldest are read (for their age). The
        objects of dropped checkpoints go at the next repack: when loose objects pile up or
        the repository is over its budget (a repack per drop cost more than the writes)."""
        now = time.time() if now is None else now
        files = self._named()
        seqs = [seq for first, last, _ in files for seq in range(first, last + 1)]
        ended = self._ages.ended(self._records, files)
        dropped = 0
        while dropped < len(seqs) and (
            len(seqs) - dropped > bounds.max_checkpoints
            or ended(seqs[dropped]) < now - bounds.max_age_seconds
        ):
            dropped += 1
        if dropped:
            self._drop_oldest(seqs[:dropped])
            seqs = seqs[dropped:]
        if not measure:
            return dropped
        counts = self.repo.object_counts()
        if counts.get("count", 0) > LOOSE_OBJECTS_TO_PACK or counts.get("packs", 0) > PACKS:
            self.repo.prune()  # also packs: many loose objects or packs slow every git command
            counts = self.repo.object_counts()
        size = size_of(counts)  # (one count-objects, not two, on a trim that prunes nothing)
        while size > bounds.budget_bytes:
            if not seqs:
                self.rotate(size)
                return dropped
            batch = max(1, len(seqs) // 4)
            self._drop_oldest(seqs[:batch])
            seqs = seqs[batch:]
            dropped += batch
            self.repo.prune()
            size = self.repo.size_bytes()
        return dropped

    def seqs(self) -> list[int]:
        """The seq of every checkpoint, oldest first (from the file names)."""
        return [seq for first, last, _ in self._named() for seq in range(first, last + 1)]

    def _drop_oldest(self, seqs: list[int]) -> None:
        """Drop the oldest checkpoints (`seqs`, a prefix of `self.seqs()`): their files
        and refs; a batch file that keeps some of its checkpoints is rewritten with them."""
        last_dropped = seqs[-1]
        for first, last, path in self._files():
            if first > last_dropped:
                break
            if path.suffix == ".json":
                path.unlink(missing_ok=True)
                self.repo.drop(f"{first:08d}")
            elif last <= last_dropped:
                path.unlink(missing_ok=True)
            else:  # the rest of a batch: its lines as they are, in a file of their own
                kept = [r for r in plain_records(path) if int(r["seq"]) > last_dropped]
                if kept:
                    name = f"{kept[0]['seq']:08d}-{kept[-1]['seq']:08d}.jsonl"
                    data = b"".join(json.dumps(r).encode() + b"\n" for r in kept)
                    write_atomically(self._records / name, data)
                path.unlink(missing_ok=True)
        self._drop_spent_batches(self.seqs())

    def keep_batch(self, first: int, last: int, tree: str) -> None:
        """One ref to the tree that keeps the objects of checkpoints first..last (a batch
        of writers, objects.flat_tree of kept_oids); it goes once none of them is left."""
        self.repo.keep_tree(f"batch-{first:08d}-{last:08d}", tree)

    def _drop_spent_batches(self, seqs: list[int]) -> None:
        """Drop the batch refs none of whose checkpoints (`seqs`, sorted) is left."""
        for name in self.repo.kept("batch-"):
            try:
                first, last = (int(part) for part in name.split("-")[1:])
            except ValueError:
                continue
            at = bisect.bisect_left(seqs, first)
            if at == len(seqs) or seqs[at] > last:
                self.repo.drop(name)

    def rotate(self, size: int) -> None:
        """Start the repository afresh (the workspace itself is over the budget): snapshots
        stay off until the budget is larger than what the workspace needed."""
        log.warning(
            "checkpoints of %s: the workspace alone is over the size budget; the shadow "
            "repository starts afresh",
            self.root,
        )
        self.repo.erase()
        shutil.rmtree(self._records, ignore_errors=True)
        self.repo = self.repo.anew()
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
