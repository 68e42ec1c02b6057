"""Temporary files of atomic writes: named so that toolhost can tell its own, and removed
at the next start when the process that made them is dead (killed in the middle of a
write).

A temp file is `.<target name>.<pid>-<start>.<8 hex>.toolhost-tmp` next to its target;
`<start>` is the process's start time (clock ticks since boot, from /proc), so a pid
reused by another process does not keep a dead writer's files alive, nor make a live
writer's look dead. The sweep walks the workspace roots without following symlinks,
removes only regular files of this user whose name has exactly that shape and whose
owner is gone, and never looks inside `.git`, toolhost's own folders (the state folder a
home folder allowed as a root holds), other file systems mounted inside a root, nor `/proc`,
`/sys` and `/dev` (a root that is `/`): the walks of a root follow one rule
(docs/CHECKPOINTS.md, "What is never walked").

A process that ends cleanly leaves no temp file, so a root is swept only when one that
wrote there did not: each runtime notes its roots in the state folder's `writers/<pid>-
<start>` and removes the note as it ends (`note_writer`); a note whose process is gone
names the roots to sweep at the next start. A start after clean ends walks nothing (the
checkpoints' measure, and nothing else, walks a large root).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import secrets
import stat
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from lsp_server.fs.workspace import NEVER_WALKED

log = logging.getLogger(__name__)

SUFFIX = ".toolhost-tmp"
_NAME = re.compile(r"^\..+\.(?P<pid>[1-9][0-9]*)-(?P<start>[0-9]+)\.[0-9a-f]{8}\.toolhost-tmp$")
# Room left for the rest of the name under the usual 255-byte limit (bytes, not
# characters: a name of 80 CJK characters is 240 bytes).
_TARGET_NAME_BYTES = 120
# A sweep of a huge tree stops after this many folders (the next start goes on).
MAX_FOLDERS = 200_000
_SKIPPED = frozenset({".git", ".hg", ".svn"})


def process_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot; None when it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:  # noqa: PTH123 - one small read
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    try:
        return int(fields[19])  # field 22 of stat(5); fields[0] is field 3
    except (IndexError, ValueError):
        return None


_OWNER = f"{os.getpid()}-{process_start(os.getpid()) or 0}"


def temp_name(target: str) -> str:
    """A fresh temp name for a write of `target`, owned by this process."""
    global _OWNER
    if not _OWNER.startswith(f"{os.getpid()}-"):  # a forked child writes under its own pid
        _OWNER = f"{os.getpid()}-{process_start(os.getpid()) or 0}"
    # Cut in bytes; a character cut in half stays as undecodable bytes (surrogateescape).
    short = os.fsdecode(os.fsencode(target)[:_TARGET_NAME_BYTES])
    return f".{short}.{_OWNER}.{secrets.token_hex(4)}{SUFFIX}"


def owner_is_dead(name: str) -> bool:
    """True only for a toolhost temp name whose process is gone."""
    found = _NAME.match(name)
    if found is None:
        return False
    return _gone(int(found["pid"]), int(found["start"]))


def _gone(pid: int, start: int) -> bool:
    """The process `pid` that started at `start` (clock ticks) is gone."""
    if pid == os.getpid():
        return False
    now = process_start(pid)
    if now is None:
        return not _pid_exists(pid)
    return start != 0 and now != start


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


@attrs.define
class SweepReport:
    """What the start-up sweep did (shown in toolhost/status as `leftoverTemps`)."""

    done: bool = False
    removed: list[str] = attrs.Factory(list)
    freed_bytes: int = 0
    folders: int = 0

    def status(self) -> dict[str, object]:
        return {
            "done": self.done,
            "removed": len(self.removed),
            "freedBytes": self.freed_bytes,
            "folders": self.folders,
        }


def sweep(roots: Iterable[Path], report: SweepReport, kept_out: Sequence[Path] = ()) -> SweepReport:
    """Remove dead writers' temp files under `roots` (see the module's rules)."""
    uid = os.geteuid()
    skipped = NEVER_WALKED | {str(path) for path in kept_out}
    try:
        for root in roots:
            device = root.stat().st_dev
            for folder, dirs, files, dir_fd in os.fwalk(root, follow_symlinks=False):
                report.folders += 1
                dirs[:] = [
                    name
                    for name in dirs
                    if name not in _SKIPPED
                    and os.path.join(folder, name) not in skipped  # noqa: PTH118 (a str)
                    and _on_device(dir_fd, name, device)
                ]
                for name in files:
                    if name.endswith(SUFFIX) and owner_is_dead(name):
                        _remove(dir_fd, name, uid, Path(folder), report)
                if report.folders >= MAX_FOLDERS:
                    return report
    except OSError:
        log.debug("the temp-file sweep stopped early", exc_info=True)
    finally:
        report.done = True
    return report


def _on_device(dir_fd: int, name: str, device: int) -> bool:
    """A folder on the root's file system (another one mounted there is not walked)."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_dev == device
    except OSError:
        return False


def _remove(dir_fd: int, name: str, uid: int, folder: Path, report: SweepReport) -> None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != uid:
            return
        os.unlink(name, dir_fd=dir_fd)  # unlink never follows a symlink
    except OSError:
        return
    report.removed.append(str(folder / name))
    report.freed_bytes += st.st_size
    log.info("removed %s, left by a killed write", folder / name)


WRITERS = "writers"
_OWNED = re.compile(r"^(?P<pid>[1-9][0-9]*)-(?P<start>[0-9]+)$")


def note_writer(state: Path, roots: Sequence[Path]) -> Path | None:
    """Note that this process may leave temp files in `roots` if it dies in a write:
    `state/writers/<pid>-<start>`, the roots NUL-separated, removed when it ends cleanly."""
    owner = f"{os.getpid()}-{process_start(os.getpid()) or 0}"
    note = state / WRITERS / owner
    try:
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_bytes(b"".join(os.fsencode(root) + b"\0" for root in roots))
    except OSError:
        log.debug("the writer's note could not be written", exc_info=True)
        return None
    atexit.register(_forget, note, os.getpid())
    return note


def _forget(note: Path, pid: int) -> None:
    if os.getpid() == pid:  # not a forked child's exit
        with contextlib.suppress(OSError):
            note.unlink()


def crashed_roots(state: Path, roots: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """(of `roots`, those a writer that did not end cleanly named; the notes that named
    them)."""
    found: list[Path] = []
    notes: list[Path] = []
    try:
        entries = list((state / WRITERS).iterdir())
    except OSError:
        return found, notes
    for note in entries:
        owner = _OWNED.match(note.name)
        if owner is None or not _gone(int(owner["pid"]), int(owner["start"])):
            continue
        try:
            named = {Path(os.fsdecode(raw)) for raw in note.read_bytes().split(b"\0") if raw}
        except OSError:
            continue
        hit = [root for root in roots if root in named]
        if hit:
            notes.append(note)
            found += [root for root in hit if root not in found]
    return found, notes


def _forget_swept(note: Path, swept: Sequence[Path]) -> None:
    """Drop the swept roots from a dead writer's note (the note, once it names none)."""
    with contextlib.suppress(OSError):
        left = [raw for raw in note.read_bytes().split(b"\0") if raw]
        left = [raw for raw in left if Path(os.fsdecode(raw)) not in swept]
        if left:
            note.write_bytes(b"".join(raw + b"\0" for raw in left))
        else:
            note.unlink()


def sweep_after_crashes(
    roots: Sequence[Path], state: Path, report: SweepReport, kept_out: Sequence[Path] = ()
) -> SweepReport:
    """Sweep the roots a writer that did not end cleanly named (none after clean ends)."""
    found, notes = crashed_roots(state, roots)
    if not found:
        report.done = True
        return report
    sweep(found, report, kept_out)
    for note in notes:
        _forget_swept(note, found)
    return report


def sweep_in_background(
    roots: Iterable[Path], kept_out: Sequence[Path] = (), state: Path | None = None
) -> SweepReport:
    """Start the sweep on a daemon thread; the report fills in as it goes. `kept_out`:
    toolhost's own folders, never walked; `state`: sweep only the roots a writer that did
    not end cleanly named there (`note_writer`); None: every root."""
    report = SweepReport()
    listed, kept = list(roots), tuple(kept_out)

    def run() -> None:
        if state is None:
            sweep(listed, report, kept)
        else:
            sweep_after_crashes(listed, state, report, kept)

    thread = threading.Thread(target=run, name="toolhost-temp-sweep", daemon=True)
    thread.start()
    return report


def at_start(
    roots: Sequence[Path], state: Path, kept_out: Sequence[Path], sweep: bool
) -> SweepReport | None:
    """A runtime's start: note it as a writer of `roots` (`note_writer`); a long-lived one
    (`sweep`) also sweeps, in the background, the roots a writer that did not end cleanly
    named (its report; None when it does not sweep)."""
    note_writer(state, roots)
    return sweep_in_background(roots, kept_out, state) if sweep else None
