"""Who changed what while a shell command ran, so that reverting one call never undoes
another's change (docs/AGENTS.md, docs/CHECKPOINTS.md).

Nothing here sees which process wrote a file (fanotify names the writer only with
CAP_SYS_ADMIN; bubblewrap 0.8 mounts no per-command overlay), so the difference of a
command's two snapshots holds every change made while it ran, whoever made it. What the
other writers did is known by origin, though: toolhost's writers and other commands record
each change (checkpoint records, in the root's store that every toolhost process on that
root shares) and editors report their saves (`textDocument/didSave`, kept in the store's
`saves.jsonl`). Against those, at the command's end (`split`):

- a change whose before and after are exactly another call's change of that path, recorded
  while the command ran, is that call's: it leaves the command's checkpoint, which keeps it
  as `theirs` (`exact` False when the other is a command too: its window may also hold this
  command's write, so that the other's revert asks);
- a change whose result is what an editor saved while the command ran is the user's: it
  leaves the checkpoint too;
- a path another writer also changed, differently, stays the command's, marked `both`.

A revert (`verdict`) leaves a file another writer may hold a change in, names them, and
reverts it only when asked again with `include_shared`. Commands still running are listed
in the store's `running/` folder, so that a revert made meanwhile knows of them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import attrs
import cattrs

from lsp_server.checkpoints.shadow import objects
from lsp_server.home.replace_file import write_atomically
from lsp_server.procs.children import pid_alive

if TYPE_CHECKING:
    from lsp_server.checkpoints.records import Checkpoint, CheckpointStore, FileRecord
    from lsp_server.checkpoints.windows import CommandWindow

log = logging.getLogger(__name__)

Share = Literal["theirs", "both"]
SAVES = "saves.jsonl"
RUNNING = "running"
SAVES_MAX_BYTES = 256 * 1024
SAVES_KEPT_SECONDS = 24 * 3600
USERS_EDITOR = "the user's editor"

_CONVERTER = cattrs.Converter()


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
        what = f"{self.tool} `{_short(self.label)}`" if self.label else self.tool
        return f"session {self.session} ({what}, call {self.call_id})"


@attrs.frozen
class EditorSave:
    """A file an editor saved (didSave): its blob id after the save."""

    path: str
    oid: str
    time: float


@attrs.frozen
class RunningCommand:
    """A shell command under way, in any toolhost process on the root."""

    call_id: str
    session: str
    tool: str
    label: str
    started: float
    pid: int

    def describe(self) -> str:
        return f"session {self.session} (bash `{_short(self.label)}`, still running)"


def _short(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- the store's side files --------------------------------------------------------------


def note_save(folder: Path, save: EditorSave) -> None:
    """Append one save (a line under PIPE_BUF: whole even with other processes appending);
    past SAVES_MAX_BYTES only the last SAVES_KEPT_SECONDS are kept."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SAVES
    line = json.dumps(_CONVERTER.unstructure(save), ensure_ascii=False) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, line.encode("utf-8", "surrogateescape"))
    finally:
        os.close(fd)
    if path.stat().st_size > SAVES_MAX_BYTES:
        kept = saves_since(folder, time.time() - SAVES_KEPT_SECONDS)
        data = "".join(json.dumps(_CONVERTER.unstructure(s)) + "\n" for s in kept)
        write_atomically(path, data.encode("utf-8", "surrogateescape"))


def note_save_of(folder: Path, root: Path, path: Path, max_bytes: int) -> None:
    """Note what an editor saved at `path` (a regular file within the size limit: larger
    ones are recorded by pointer, which no save matches)."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return
        oid = objects.object_id("blob", path.read_bytes())
        note_save(folder, EditorSave(path.relative_to(root).as_posix(), oid, time.time()))
    except (OSError, ValueError):
        log.warning("noting the editor's save of %s failed", path, exc_info=True)


def saves_since(folder: Path, since: float) -> list[EditorSave]:
    found = []
    with contextlib.suppress(OSError):
        for line in (folder / SAVES).read_bytes().splitlines():
            with contextlib.suppress(ValueError, cattrs.BaseValidationError):
                save = _CONVERTER.structure(json.loads(line), EditorSave)
                if save.time >= since:
                    found.append(save)
    return found


def _running_file(folder: Path, call_id: str) -> Path:
    return folder / RUNNING / f"{call_id.encode('utf-8', 'surrogateescape').hex()}.json"


def begin(store: CheckpointStore, window: CommandWindow) -> int:
    """List a command as running on the store's root; the number of the next checkpoint
    there: the records from it on are those of the command's window."""
    mark_running(store.folder, window)
    return store.next_seq()


def end(store: CheckpointStore, call_id: str) -> None:
    unmark_running(store.folder, call_id)


def mark_running(folder: Path, window: CommandWindow) -> None:
    command = RunningCommand(
        window.call_id, window.session, window.tool, window.label, window.started, os.getpid()
    )
    (folder / RUNNING).mkdir(parents=True, exist_ok=True)
    data = json.dumps(_CONVERTER.unstructure(command))  # ASCII: a label may hold surrogates
    write_atomically(_running_file(folder, command.call_id), data.encode("utf-8"))


def unmark_running(folder: Path, call_id: str) -> None:
    _running_file(folder, call_id).unlink(missing_ok=True)


def running(folder: Path) -> list[RunningCommand]:
    """The commands under way; a file a dead process left is removed."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder / RUNNING):
            try:
                command = _CONVERTER.structure(
                    json.loads(Path(entry.path).read_bytes()), RunningCommand
                )
            except (OSError, ValueError, cattrs.BaseValidationError):
                continue
            if pid_alive(command.pid):
                found.append(command)
            else:
                Path(entry.path).unlink(missing_ok=True)
    return found


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
    store: CheckpointStore, window: CommandWindow, root: Path, files: list[FileRecord]
) -> tuple[list[FileRecord], tuple[OtherWriter, ...]]:
    """`split` of a command's changes on one root, against what its store holds."""

    def changed_at(path: str) -> float | None:
        try:
            return (root / path).lstat().st_mtime
        except OSError:
            return None

    return split(
        files,
        window.call_id,
        window.started,
        store.since(window.first_seqs.get(root, 1)),
        saves_since(store.folder, window.started),
        running(store.folder),
        changed_at,
    )


# -- at a revert -----------------------------------------------------------------------------


@attrs.frozen
class Verdict:
    """Why a revert leaves one path of a command: `theirs`, its change is another writer's
    (never this command's to undo); else `held`, other writers may hold a change in it."""

    path: str
    names: tuple[str, ...]
    theirs: bool = False


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
    for path, owners in _late_owners(checkpoint, recorded, saves).items():
        found[path] = Verdict(path, owners, theirs=True)
    held: dict[str, list[str]] = {}
    for other in checkpoint.others:
        if other.share == "both":
            held.setdefault(other.path, []).append(other.describe())
    mine = {record.path for record in checkpoint.files}
    for later in recorded:
        for other in later.others:
            if other.call_id == checkpoint.call_id and not other.exact and other.path in mine:
                held.setdefault(other.path, []).append(
                    _writer(other.path, later, "both").describe()
                )
    still = [
        c.describe()
        for c in commands
        if c.call_id != checkpoint.call_id and c.started <= checkpoint.ended
    ]
    for path in mine:
        names = [*held.get(path, []), *still]
        if names and path not in found:
            found[path] = Verdict(path, tuple(dict.fromkeys(names)))
    return found


def _late_owners(
    checkpoint: Checkpoint, recorded: Iterable[Checkpoint], saves: Iterable[EditorSave]
) -> dict[str, tuple[str, ...]]:
    """Changes of the checkpoint that a writer's record (journaled by another process after
    the command ended) or an editor save shows to be theirs."""
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
    return names
