"""The windows the checkpoint service keeps open around a call: what each root (a command)
or each file (a writer) was before it, until the call ends and its record is written."""

from __future__ import annotations

from pathlib import Path

import attrs

from lsp_server.checkpoints.records import Checkpoint, Reads
from lsp_server.checkpoints.shadow.tree_changes import Entry
from lsp_server.procs.process_writes import Written


@attrs.define
class CommandWindow:
    """Between a command's start and its end: the tree of each root before it."""

    call_id: str
    session: str
    tool: str
    label: str
    started: float
    trees: dict[Path, str]
    left_out: dict[Path, dict[str, list[int | str]]] = attrs.Factory(dict)
    """Per root, the ignored files no snapshot holds (ignored.py), before the command."""
    agent: str | None = None
    """The session's agent (set by the caller), for the record."""
    first_seqs: dict[Path, int] = attrs.Factory(dict)
    """Per root, the number of the next checkpoint when the command started: the records
    from there on are the other writers' of its window (attribution.py)."""
    notes: list[str] = attrs.Factory(list)
    """What the command's result must say: a checkpoint that failed, changes that could
    not be recorded."""
    written: Written | None = None
    """What the command's own processes changed, as the kernel reported it (shell_calls.py);
    None where it cannot say: then attribution is by origin."""


@attrs.define
class WriteWindow:
    call_id: str
    session: str
    tool: str
    started: float
    moves: list[tuple[Path, Path | None]]
    """(path, destination) of each change; destination None unless the file moves."""
    before: dict[Path, Entry | None]
    reads: Reads = "editor"
    reverts: str | None = None
    blobs: dict[str, bytes] = attrs.Factory(dict)
    """oid -> the exact bytes of each state read (before and after), for the journal."""
    pointers: set[str] = attrs.Factory(set)
    """The oids in `blobs` that stand for files over the size limit."""
    agent: str | None = None
    """The session's agent (set by the caller), for the record."""
    pending: set[Path] = attrs.Factory(set)
    """Paths not read before the publish: it hands their states over (write_states.py)."""
    checked: dict[Path, tuple[bytes, int]] = attrs.Factory(dict)
    """The bytes and st_mode of pending paths at the publish's last check, before the rename."""
    after: dict[Path, Entry | None] = attrs.Factory(dict)
    """The states after the call that the publish handed over (the rest are read)."""
    broken: bool = False
    """A state could not be taken during the publish: no checkpoint (the failure says why)."""


@attrs.frozen
class Listed:
    root: Path
    checkpoint: Checkpoint
