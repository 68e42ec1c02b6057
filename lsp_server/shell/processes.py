"""Finding and signalling every process a command started, wherever it went.

A command's processes are found three ways in /proc: by process group (the command runs
in a session of its own, so its group id is its first process's pid), by descent from that
first process (the supervisor keeps orphans as its children; bwrap's namespace hangs below
it), and by the marker variable its environment carries (processes that called setsid
left the group but kept the environment). Zombies are dead already and are not counted.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterable
from pathlib import Path

import anyio
import attrs

from lsp_server.shell.environment import MARKER_VARIABLE

_PROC = Path("/proc")
_POLL_SECONDS = 0.05


@attrs.frozen
class ProcessInfo:
    pid: int
    pgid: int
    sid: int
    command: str

    def describe(self) -> str:
        return f"{self.pid} {self.command}"


def _read_stat(pid_dir: Path) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgid, sid) from /proc/<pid>/stat; the name may hold spaces and parens."""
    try:
        text = (pid_dir / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    if len(fields) < 4:
        return None
    return fields[0], int(fields[1]), int(fields[2]), int(fields[3])


def _below(pid: int, root: int, parents: dict[int, int]) -> bool:
    ancestor = parents.get(pid)
    while ancestor is not None and ancestor > 1:
        if ancestor == root:
            return True
        ancestor = parents.get(ancestor)
    return False


def _has_marker(pid_dir: Path, marker: bytes) -> bool:
    try:
        environ = (pid_dir / "environ").read_bytes()
    except OSError:
        # Another user's process (or gone): not ours to find.
        return False
    return marker in environ.split(b"\0")


def _command_line(pid_dir: Path) -> str:
    try:
        raw = (pid_dir / "cmdline").read_bytes()
    except OSError:
        return "?"
    text = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")
    if not text:
        try:
            text = "[" + (pid_dir / "comm").read_text().strip() + "]"
        except OSError:
            text = "?"
    return text if len(text) <= 160 else text[:157] + "..."


def find_processes(pgid: int | None, marker: str) -> list[ProcessInfo]:
    """Live processes in group `pgid`, below its leader (a supervisor's re-parented
    orphans, a sandbox's namespace) or carrying the marker (blocking: a /proc scan)."""
    if not _PROC.is_dir():
        return []
    wanted = f"{MARKER_VARIABLE}={marker}".encode()
    own = os.getpid()
    try:
        entries = list(_PROC.iterdir())
    except OSError:
        return []
    stats: dict[int, tuple[Path, str, int, int]] = {}
    parents: dict[int, int] = {}
    for entry in entries:
        if not entry.name.isdigit():
            continue
        stat = _read_stat(entry)
        if stat is None:
            continue
        pid = int(entry.name)
        state, parent, group, session = stat
        parents[pid] = parent
        if pid != own and state not in ("Z", "X"):
            stats[pid] = (entry, state, group, session)
    found: list[ProcessInfo] = []
    for pid, (entry, _, group, session) in stats.items():
        if (
            group == pgid
            or (pgid is not None and _below(pid, pgid, parents))
            or _has_marker(entry, wanted)
        ):
            found.append(ProcessInfo(pid, group, session, _command_line(entry)))
    return sorted(found, key=lambda p: p.pid)


def send_signal(pgid: int | None, processes: Iterable[ProcessInfo], sig: int) -> None:
    """Signal the group and each listed process; vanished processes are fine."""
    targets: list[tuple[bool, int]] = []
    if pgid is not None:
        targets.append((True, pgid))
    targets.extend((False, p.pid) for p in processes)
    for is_group, ident in targets:
        try:
            if is_group:
                os.killpg(ident, sig)
            else:
                os.kill(ident, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_now(pgid: int | None, marker: str) -> list[ProcessInfo]:
    """SIGKILL the group and every marked process at once (cancellation, server exit)."""
    processes = find_processes(pgid, marker)
    send_signal(pgid, processes, signal.SIGKILL)
    return processes


async def _wait_gone(pgid: int | None, marker: str, seconds: float) -> list[ProcessInfo]:
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        alive = await anyio.to_thread.run_sync(find_processes, pgid, marker)
        if not alive or asyncio.get_running_loop().time() >= deadline:
            return alive
        await asyncio.sleep(_POLL_SECONDS)


async def terminate(pgid: int | None, marker: str, grace_seconds: float) -> list[ProcessInfo]:
    """SIGTERM the group and marked processes, SIGKILL what is left after the grace
    period; returns the processes that were found alive at the start."""
    found = await anyio.to_thread.run_sync(find_processes, pgid, marker)
    send_signal(pgid, found, signal.SIGTERM)
    alive = await _wait_gone(pgid, marker, grace_seconds)
    if alive:
        send_signal(pgid, alive, signal.SIGKILL)
        await _wait_gone(pgid, marker, 1.0)
    return found
