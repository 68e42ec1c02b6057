"""Who changed what while a shell command ran, so that reverting one call never undoes
another's change (docs/AGENTS.md, docs/CHECKPOINTS.md).

Where the kernel names the process behind each change (procs/process_writes.py: fanotify
and the process connector, which take CAP_SYS_ADMIN and CAP_NET_ADMIN), a command's
checkpoint keeps the changes its own processes made (`window.written`) and leaves out
those of a known writer: exactly another call's recorded change or an editor's save
(below), or a change by a command still running in this toolhost (its checkpoint has it).
A change no one is known to have made (a process outside every command: a daemon an
earlier command left, `systemd-run`, a container's daemon, the user's terminal) stays in
the command's checkpoint marked `both`, by "another process (not one of this command's)":
reverting the command asks before it undoes it (`exact_split`). It was left out once, but
then no checkpoint held it and no revert could undo it: every change must stay undoable,
and a prompt-injected agent must not be able to make a change no revert can undo by
handing the write to a process outside its command's tree. The checkpoint is still
`exact`: the kernel said which changes its processes made; the others are marked.

Elsewhere nothing sees which process wrote a file, so the difference of a command's two
snapshots holds every change made while it ran, whoever made it. What the other writers
did is known by origin: toolhost's writers and other commands record each change (records,
a writer's journaled first, in the root's store every toolhost process on it shares) and
editors report their saves (`didSave`, in the store's `saves.jsonl`). Against those, at
the command's end (`split`):

- a change whose before and after are exactly another call's change of that path, recorded
  while the command ran, is that call's: it leaves the command's checkpoint, which keeps it
  as `theirs` (`exact` False when the other is a command too: its window may also hold this
  command's write, so that the other's revert asks);
- a change whose result is what an editor saved while the command ran is the user's: it
  leaves the checkpoint too;
- a path another writer also changed, differently, stays the command's, marked `both`.

A revert (`verdict`) leaves a file another writer may hold a change in, names them, and
reverts it only when asked again with `include_shared`. Commands under way are listed in
the store's `running/` folder, for a revert made meanwhile.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import attrs

from lsp_server.checkpoints.sharing.side_files import (
    EditorSave,
    RunningCommand,
    running,
    saves_since,
    short_label,
)
from lsp_server.procs import process_writes
from lsp_server.procs.process_writes import Written

if TYPE_CHECKING:
    from lsp_server.checkpoints.records import Checkpoint, CheckpointStore, FileRecord
    from lsp_server.checkpoints.windows import CommandWindow

Share = Literal["theirs", "both"]
USERS_EDITOR = "the user's editor"
PROCESS = "process"
"""The tool of a change the kernel showed no process of the command's made, with no record
or save: `theirs` when a command still running in this toolhost made it, else `both`."""


@attrs.frozen
class OtherWriter:
    """Another writer of one path while a shell command ran: `theirs`, the change is exactly
    theirs and left the command's checkpoint; `both`, they changed the path too and the
    command's change stays, marked."""

    path: str
    call_id: str
    session: str
    tool: str
    label: str
    share: Share
    exact: bool = True
    """False when the other writer is itself a command (a window, not an instant): this
    command may have written the path while it ran, so the other's revert asks."""

    def describe(self) -> str:
        if self.tool == "save":
            return USERS_EDITOR
        if self.tool == PROCESS:
            return "another process (not one of this command's)"
        what = f"{self.tool} `{short_label(self.label)}`" if self.label else self.tool
        return f"session {self.session} ({what}, call {self.call_id})"


# -- at a command's end --------------------------------------------------------------------


def _same_change(mine: FileRecord, theirs: FileRecord) -> bool:
    return (
        mine.path == theirs.path
        and mine.source == theirs.source
        and mine.before == theirs.before
        and mine.after == theirs.after
    )


def split(
    files: list[FileRecord],
    call_id: str,
    started: float,
    recorded: Iterable[Checkpoint],
    saves: Iterable[EditorSave],
    commands: Iterable[RunningCommand] = (),
    changed_at: Callable[[str], float | None] = lambda path: None,
) -> tuple[list[FileRecord], tuple[OtherWriter, ...]]:
    """A command's changes (`files`, from its snapshots) without those another writer made
    while it ran (`recorded`: checkpoints recorded since it started; `saves`: editor saves
    since it started), and the other writers of its paths: `commands` still running may
    have written any path changed after they started (`changed_at`: its mtime, None when
    unknown, e.g. deleted)."""
    others_of: dict[str, list[tuple[Checkpoint, FileRecord]]] = {}
    for checkpoint in recorded:
        if checkpoint.call_id == call_id or checkpoint.ended < started:
            continue
        for record in checkpoint.files:
            for path in {record.path, record.source} - {None}:
                assert path is not None
                others_of.setdefault(path, []).append((checkpoint, record))
    saved: dict[str, list[EditorSave]] = {}
    for save in saves:
        if save.time >= started:
            saved.setdefault(save.path, []).append(save)

    running_now = [c for c in commands if c.call_id != call_id]
    kept: list[FileRecord] = []
    others: list[OtherWriter] = []
    for mine in files:
        paths = {mine.path, mine.source} - {None}
        candidates = [pair for path in paths for pair in others_of.get(path or "", [])]
        exact = [c for c, theirs in candidates if _same_change(mine, theirs)]
        result = mine.after.oid if mine.after is not None else None
        user_saved = [s for s in saved.get(mine.path, []) if s.oid == result]
        if exact:
            owner = exact[-1]
            others.append(_writer(mine.path, owner, "theirs"))
            continue
        if user_saved:
            others.append(OtherWriter(mine.path, "editor-save", "editor", "save", "", "theirs"))
            continue
        kept.append(mine)
        for checkpoint, _ in candidates:
            others.append(_writer(mine.path, checkpoint, "both"))
        if saved.get(mine.path):
            others.append(OtherWriter(mine.path, "editor-save", "editor", "save", "", "both"))
        when = changed_at(mine.path)
        for command in running_now:
            if when is None or when >= command.started:
                others.append(
                    OtherWriter(
                        mine.path,
                        command.call_id,
                        command.session,
                        command.tool,
                        command.label,
                        "both",
                        exact=False,
                    )
                )
    return kept, tuple(dict.fromkeys(others))


def _writer(path: str, checkpoint: Checkpoint, share: Share) -> OtherWriter:
    return OtherWriter(
        path,
        checkpoint.call_id,
        checkpoint.session,
        checkpoint.tool,
        checkpoint.label,
        share,
        exact=checkpoint.reads == "editor",
    )


def own_changes(
    store: CheckpointStore,
    window: CommandWindow,
    root: Path,
    files: list[FileRecord],
    pending: Iterable[Checkpoint] = (),
) -> tuple[list[FileRecord], tuple[OtherWriter, ...]]:
    """`split` of a command's changes on one root, against its store's records and the
    writers' changes journaled, not yet recorded (`pending`, read first: journal.py)."""

    def changed_at(path: str) -> float | None:
        with contextlib.suppress(OSError):
            return (root / path).lstat().st_mtime
        return None

    recorded = [*store.since(window.first_seqs.get(root, 1)), *pending]
    saves = saves_since(store.folder, window.started)
    commands = running(store.folder)
    if window.written is not None:
        tracker = process_writes.shared()
        return exact_split(
            files,
            window.call_id,
            window.started,
            recorded,
            saves,
            window.written,
            root,
            tracker.claimed_written() if tracker is not None else Written(),
            [c for c in commands if c.pid != os.getpid()],  # this process's: the kernel's
            changed_at,
        )
    return split(files, window.call_id, window.started, recorded, saves, commands, changed_at)


def exact_split(
    files: list[FileRecord],
    call_id: str,
    started: float,
    recorded: Iterable[Checkpoint],
    saves: Iterable[EditorSave],
    written: Written,
    root: Path,
    running_here: Written | None = None,
    elsewhere: Iterable[RunningCommand] = (),
    changed_at: Callable[[str], float | None] = lambda path: None,
) -> tuple[list[FileRecord], tuple[OtherWriter, ...]]:
    """A command's changes when the kernel named every writer: those its processes made
    (`written`), and those no other writer is known to have made, marked `both`. A change
    exactly another's (a record or save), or by a command still running here (`running_here`:
    its own checkpoint holds it), is left out. `elsewhere`: commands running in other toolhost
    processes, named beside an unknown writer (the kernel says this one did not write it)."""
    recorded, saves = list(recorded), list(saves)

    def by(writer: Written | None, record: FileRecord) -> bool:
        paths = {record.path, record.source} - {None}
        return writer is not None and any(
            writer.covers(str(root / path)) for path in paths if path is not None
        )

    mine = [record for record in files if by(written, record)]
    others = [o for o in split(mine, call_id, started, recorded, saves)[1] if o.share == "both"]
    rest, named = split([r for r in files if not by(written, r)], call_id, started, recorded, saves)
    others += [other for other in named if other.share == "theirs"]
    named_at: dict[str, list[OtherWriter]] = {}
    for other in named:
        named_at.setdefault(other.path, []).append(other)
    kept_ids = {id(record) for record in mine}  # (by identity: a list test is quadratic)
    for record in rest:
        if by(running_here, record):
            others.append(OtherWriter(record.path, "", "", PROCESS, "", "theirs"))
            continue
        kept_ids.add(id(record))
        others.append(OtherWriter(record.path, "", "", PROCESS, "", "both"))
        others += named_at.get(record.path, [])
        when = changed_at(record.path)
        others += [
            OtherWriter(record.path, c.call_id, c.session, c.tool, c.label, "both")
            for c in elsewhere
            if c.call_id != call_id and (when is None or when >= c.started)
        ]
    return [record for record in files if id(record) in kept_ids], tuple(dict.fromkeys(others))


def mechanism(exact_allowed: bool) -> str:
    """How shell commands' changes are told from others' (toolhost/status)."""
    if not exact_allowed:
        return "by origin (checkpoints.exact_attribution is off)"
    if process_writes.shared() is None:
        return f"by origin (the kernel names no writer here: {process_writes.unavailable()})"
    return "exact: the kernel names the process behind each change"


# -- at a revert -----------------------------------------------------------------------------


@attrs.frozen
class Verdict:
    """Why a revert leaves one path of a command: `theirs`, its change is another writer's
    (never this command's to undo); else `held`, other writers may hold a change in it."""

    path: str
    names: tuple[str, ...]
    theirs: bool = False
    unknown: bool = False
    """Exact: a process no record or save names changed it, not the command's."""

    def reason(self) -> str:
        """Why a held path was left, and how to revert it anyway."""
        anyway = "revert it anyway with include_shared (CLI: toolhost revert --include-shared)"
        if not self.unknown:
            return (
                f"{' and '.join(self.names)} changed files while this command ran and may "
                f"have changed this one too; {anyway}"
            )
        process = OtherWriter("", "", "", PROCESS, "", "both").describe()
        rest = [name for name in self.names if name != process]
        also = f"; {' and '.join(rest)} changed files meanwhile too" if rest else ""
        return (
            f"{process} changed it while this command ran, and no toolhost call or editor "
            f"save made that change{also}; {anyway}"
        )


def verdicts(
    checkpoint: Checkpoint,
    recorded: Iterable[Checkpoint],
    commands: Iterable[RunningCommand],
    saves: Iterable[EditorSave],
) -> dict[str, Verdict]:
    """The paths of a command's checkpoint a revert must leave (none for a writer's:
    an instant, whose change is exactly its own)."""
    if checkpoint.reads != "disk":
        return {}
    found: dict[str, Verdict] = {}
    recorded = list(recorded)
    held: dict[str, list[str]] = {}
    unknown = set()
    for other in checkpoint.others:
        if other.share == "both":
            held.setdefault(other.path, []).append(other.describe())
            if other.tool == PROCESS:
                unknown.add(other.path)
    for path, owners in _late_owners(checkpoint, recorded, saves, unknown).items():
        found[path] = Verdict(path, owners, theirs=True)
    mine = {record.path for record in checkpoint.files}
    for later in recorded:
        for other in later.others:
            if (
                other.call_id == checkpoint.call_id
                and not other.exact
                and other.path in mine
                and (other.share == "both" or not later.exact)  # exact: "theirs" is certain
            ):
                held.setdefault(other.path, []).append(
                    _writer(other.path, later, "both").describe()
                )
    still = [
        c.describe()
        for c in commands
        if c.call_id != checkpoint.call_id
        and c.started <= checkpoint.ended
        and not checkpoint.exact  # exact: a later write of theirs is the revert's to merge
    ]
    for path in mine:
        names = [*held.get(path, []), *still]
        if names and path not in found:
            found[path] = Verdict(path, tuple(dict.fromkeys(names)), unknown=path in unknown)
    return found


def _late_owners(
    checkpoint: Checkpoint,
    recorded: list[Checkpoint],
    saves: Iterable[EditorSave],
    unknown: set[str],
) -> dict[str, tuple[str, ...]]:
    """Changes of the checkpoint that a writer's record (journaled by another process after
    the command ended) or an editor save shows to be theirs; and (exact) changes no process
    of its made (`unknown`) that a command recorded later (still running in another toolhost
    process when this one ended) holds as exactly its own processes' change."""
    window = [
        c
        for c in recorded
        if c.call_id != checkpoint.call_id
        and c.reads == "editor"
        and c.reverts != checkpoint.call_id
        and c.ended >= checkpoint.time
        and c.time <= checkpoint.ended
    ]
    _, others = split(
        list(checkpoint.files),
        checkpoint.call_id,
        checkpoint.time,
        window,
        [s for s in saves if s.time <= checkpoint.ended],
    )
    names: dict[str, tuple[str, ...]] = {}
    for other in others:
        if other.share == "theirs":
            names[other.path] = (*names.get(other.path, ()), other.describe())
    mine = {record.path: record for record in checkpoint.files if record.path in unknown}
    for later in recorded:
        if (
            later.call_id == checkpoint.call_id
            or later.reads != "disk"
            or not later.exact
            or later.time > checkpoint.ended
            or later.ended < checkpoint.time
        ):
            continue
        marked = {o.path for o in later.others if o.tool == PROCESS and o.share == "both"}
        for theirs in later.files:
            own = mine.get(theirs.path)
            if own is not None and theirs.path not in marked and _same_change(own, theirs):
                described = _writer(theirs.path, later, "theirs").describe()
                names[theirs.path] = (*names.get(theirs.path, ()), described)
    return names
