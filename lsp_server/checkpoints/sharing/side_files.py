"""What every toolhost process on a root shares beside the checkpoint records, in the
root's store: the editors' saves (`saves.jsonl`, appended by didSave) and the commands
under way (`running/`, one file each), so that attribution.py can tell whose a change is.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import cattrs

from lsp_server.checkpoints.shadow import objects
from lsp_server.home.replace_file import write_atomically
from lsp_server.procs.children import pid_alive

if TYPE_CHECKING:
    from lsp_server.checkpoints.records import CheckpointStore
    from lsp_server.checkpoints.windows import CommandWindow

log = logging.getLogger(__name__)

SAVES = "saves.jsonl"
RUNNING = "running"
SAVES_MAX_BYTES = 256 * 1024
SAVES_KEPT_SECONDS = 24 * 3600

_CONVERTER = cattrs.Converter()


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
        return f"session {self.session} (bash `{short_label(self.label)}`, still running)"


def short_label(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- the files --------------------------------------------------------------


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
