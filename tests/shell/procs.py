"""Process checks for the shell tests, read straight from /proc (independent of the code
under test)."""

from __future__ import annotations

import asyncio
from pathlib import Path


def is_alive(pid: int) -> bool:
    """A pid that is gone or a zombie (dead, waiting to be reaped) counts as not alive."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    state = stat[stat.rfind(")") + 2 :].split()[0]
    return state not in ("Z", "X")


async def wait_gone(pids: list[int], limit_seconds: float = 10.0) -> list[int]:
    """Poll until none of `pids` is alive; returns those still alive at the limit (a
    generous bound, not a timing assertion)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_seconds
    while True:
        alive = [pid for pid in pids if is_alive(pid)]
        if not alive or loop.time() >= deadline:
            return alive
        await asyncio.sleep(0.05)


def processes_with_marker(marker: str, *, prefix: bool = False) -> list[int]:
    """Live processes whose environment carries TOOLHOST_JOB=<marker> (or a value starting
    with it, when `prefix`)."""
    wanted = f"TOOLHOST_JOB={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        values = environ.split(b"\0")
        hit = any(v.startswith(wanted) for v in values) if prefix else wanted in values
        if hit and is_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def read_pids(path: Path) -> list[int]:
    return [int(word) for word in path.read_text().split()]


def pids_running(*argv: str) -> list[int]:
    """Live processes whose command line is exactly `argv` (pids as the host sees them:
    a sandboxed command sees its own PID namespace, so `echo $$` does not name it here)."""
    wanted = [a.encode() for a in argv]
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.rstrip(b"\0").split(b"\0") == wanted and is_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


async def wait_running(*argv: str, limit_seconds: float = 30.0) -> list[int]:
    """Poll until a process runs `argv`; its pids (empty at the limit)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_seconds
    while not (found := pids_running(*argv)) and loop.time() < deadline:
        await asyncio.sleep(0.02)
    return found
