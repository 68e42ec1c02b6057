"""toolhost's child processes, as every engine that starts one sees them: nothing outlives
the server. A child language server or command gets a parent-death signal; what a command
left running is listed in its state folder under LEFTOVERS_NAME (by the sandbox's EXIT trap
or by the supervisor, sandbox/supervisor.py) for the shell to reap."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1
# The file, in a command's state folder, that lists what it left running (pid pgid sid
# command line per line): written by the sandbox's EXIT trap or by the supervisor.
LEFTOVERS_NAME = "leftovers"


def _load_prctl() -> Callable[..., int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(name, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()


def parent_death_hook(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A preexec function: the child gets `sig` when the server dies (even by SIGKILL).
    None where prctl is not available (not Linux)."""
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()

    def set_parent_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        # The server may have died between fork and prctl: then nobody would signal us.
        if os.getppid() != parent:
            with contextlib.suppress(OSError):
                os.kill(os.getpid(), sig)

    return set_parent_death_signal


def pid_alive(pid: int) -> bool:
    """Whether a process of that id exists (another user's counts: the caller checks
    ownership where it matters)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
