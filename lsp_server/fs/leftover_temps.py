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
"""

from __future__ import annotations

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
    pid, start = int(found["pid"]), int(found["start"])
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


def sweep_in_background(roots: Iterable[Path], kept_out: Sequence[Path] = ()) -> SweepReport:
    """Start the sweep on a daemon thread; the report fills in as it goes. `kept_out`:
    toolhost's own folders, never walked."""
    report = SweepReport()
    thread = threading.Thread(
        target=sweep,
        args=(list(roots), report, tuple(kept_out)),
        name="toolhost-temp-sweep",
        daemon=True,
    )
    thread.start()
    return report
