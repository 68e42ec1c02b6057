"""A thread of this process gives the machine to the rest: its nice value and its I/O
class (a thread is a task of its own on Linux, and what it starts inherits both)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import sys
import threading

# ioprio_set(2) by architecture; IOPRIO_WHO_PROCESS names a thread (a task) on Linux.
_IOPRIO_SET = {"x86_64": 251, "aarch64": 30, "riscv64": 30, "i686": 289, "armv7l": 314}
_IOPRIO_WHO_PROCESS = 1
IO_LOWEST = (2 << 13) | 7
"""Best effort, its lowest level (`ionice -c2 -n7`): behind everyone's I/O, never starved."""
IO_IDLE = 3 << 13
"""Only when no one else uses the disk (`ionice -c3`)."""


def lower_priority(niceness: int, base: int | None = None, io: int | None = IO_LOWEST) -> None:
    """The calling thread's nice value raised by `niceness` (from `base`, else from its
    own), and its I/O class set to `io` (None: left as it is). Only ever lowered: raising
    needs privilege, so a failure leaves the thread as it was."""
    if sys.platform != "linux":
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError):
        start = os.getpriority(os.PRIO_PROCESS, tid) if base is None else base
        os.setpriority(os.PRIO_PROCESS, tid, start + niceness)
    number = _IOPRIO_SET.get(platform.machine())
    if io is None or number is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall(number, _IOPRIO_WHO_PROCESS, tid, io)


def only_when_idle() -> None:
    """The calling thread runs only on a core nothing else wants (SCHED_IDLE), its I/O
    too: for work no one waits for. Falls back to the lowest nice value."""
    lower_priority(19, base=0, io=IO_IDLE)
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setscheduler(threading.get_native_id(), os.SCHED_IDLE, os.sched_param(0))
