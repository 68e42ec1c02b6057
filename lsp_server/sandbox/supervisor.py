"""A tiny supervisor for commands that run without bubblewrap (none installed, or the
sandbox turned off): nothing they start outlives them or the server.

Run as `python -I -S supervisor.py SERVER_PID LEFTOVERS GRACE KEEP -- argv...` (standard
library only, no site: it starts in a few milliseconds). It becomes a child subreaper, so
every orphan of the command (`env -i setsid daemon &` included, which leaves the process
group and drops the marker variable) is re-parented to it and stays findable; it gets
SIGTERM when the server dies (parent-death signal). When the command's main process exits
it writes what is still running to LEFTOVERS (the format of the sandbox's EXIT trap) and
ends it (SIGTERM, SIGKILL after GRACE seconds), unless KEEP is 1 (shell.kill_daemons off).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from pathlib import Path

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _descendants(root: int) -> list[tuple[int, str]]:
    """(pid, "pid pgid sid cmdline") of every live process below `root`: stat for all,
    the command line only for those below it."""
    parents: dict[int, int] = {}
    groups: dict[int, tuple[str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) < 4 or fields[0] in ("Z", "X"):
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        groups[pid] = (fields[2], fields[3])
    found = []
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor is not None and ancestor not in (root, 0, 1):
            ancestor = parents.get(ancestor)
        if ancestor != root:
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        except OSError:
            continue
        group, session = groups[pid]
        command = b" ".join(argv).decode("utf-8", "replace")
        found.append((pid, f"{pid} {group} {session} {command}"))
    return sorted(found)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _end_all(grace: float, alive: list[tuple[int, str]] | None = None) -> None:
    """SIGTERM every descendant (`alive`: found already), SIGKILL what is left after
    `grace` seconds."""
    me = os.getpid()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 1.0)):
        alive = _descendants(me) if alive is None else alive
        if not alive:
            return
        for pid, _ in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while _descendants(me) and time.monotonic() < deadline:
            _reap()
            time.sleep(0.02)
        alive = None
    _reap()


def _exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status))


def main(args: list[str]) -> None:
    server, leftovers, grace, keep = int(args[0]), Path(args[1]), float(args[2]), args[3] == "1"
    argv = args[5:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    def stop(signum: int, frame: object) -> None:
        _end_all(0.2 if signum == signal.SIGTERM else 0.0)
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    if os.getppid() != server:  # the server died before the parent-death signal was set
        os._exit(1)
    main_pid = os.fork()
    if main_pid == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == main_pid:
            break
    left = _descendants(os.getpid())
    leftovers.write_text("".join(row + "\n" for _, row in left))
    if left and not keep:
        _end_all(grace, left)
    _exit_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
