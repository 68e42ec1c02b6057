"""Is a command waiting for input? Some process of it is asleep in a read (or select, poll,
epoll) on the command's own stdin, the terminal toolhost holds (shell/terminal.py).

Read from /proc: the system call a sleeping process is in (`/proc/PID/syscall`: its number
and arguments), which descriptors it waits on (the fd argument of read; the fd set of
select and the pollfd array of poll, read from `/proc/PID/mem`; the targets an epoll
descriptor watches, from `/proc/PID/fdinfo`), and what each descriptor is
(`/proc/PID/fd/N`, compared by device and inode). Where the system call cannot be read,
the kernel's wait channel says "reading a terminal" and fd 0 must be ours. A pipe in the
middle of a pipeline (`sleep 5 | cat`) is not the command's stdin and never counts.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
from collections.abc import Iterable
from pathlib import Path

Identity = tuple[int, int]

_SYSCALLS: dict[str, dict[str, frozenset[int]]] = {
    "x86_64": {
        "read": frozenset((0, 17, 19)),  # read, pread64, readv
        "select": frozenset((23, 270)),  # select, pselect6
        "poll": frozenset((7, 271)),  # poll, ppoll
        "epoll": frozenset((232, 281, 441)),  # epoll_wait, epoll_pwait, epoll_pwait2
    },
    "aarch64": {
        "read": frozenset((63, 65, 67)),
        "select": frozenset((72,)),
        "poll": frozenset((73,)),
        "epoll": frozenset((22, 441)),
    },
}
_TERMINAL_WAITS = frozenset(("n_tty_read", "wait_woken"))
_MAX_FDS = 1024
_POLLIN = 0x001
_EPOLL_TARGET = re.compile(r"^tfd:\s*(\d+)", re.MULTILINE)


_DEV_TTY = os.makedev(5, 0)


def _target(pid: int, fd: int) -> Identity | None:
    """What descriptor `fd` of `pid` is; /dev/tty stands for the controlling terminal."""
    try:
        status = Path(f"/proc/{pid}/fd/{fd}").stat()
    except OSError:
        return None
    if status.st_rdev == _DEV_TTY and status.st_ino:
        return (-1, _controlling_terminal(pid))
    return status.st_dev, status.st_ino


def _controlling_terminal(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = text[text.rfind(")") + 2 :].split()
    return int(fields[4]) if len(fields) > 4 else 0


def _memory(pid: int, address: int, size: int) -> bytes:
    try:
        fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    except OSError:
        return b""
    try:
        return os.pread(fd, size, address)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _selected(pid: int, count: int, address: int) -> list[int]:
    count = min(count, _MAX_FDS)
    bitmap = _memory(pid, address, (count + 7) // 8) if address else b""
    return [fd for fd in range(count) if fd // 8 < len(bitmap) and bitmap[fd // 8] >> fd % 8 & 1]


def _polled(pid: int, address: int, count: int) -> list[int]:
    data = _memory(pid, address, 8 * min(count, _MAX_FDS))
    fds = []
    for offset in range(0, len(data) - 7, 8):
        fd = int.from_bytes(data[offset : offset + 4], "little", signed=True)
        events = int.from_bytes(data[offset + 4 : offset + 6], "little")
        if fd >= 0 and events & _POLLIN:
            fds.append(fd)
    return fds


def _epolled(pid: int, epfd: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/fdinfo/{epfd}").read_text()
    except OSError:
        return []
    return [int(match) for match in _EPOLL_TARGET.findall(text)]


def _waited_fds(pid: int, line: str) -> list[int] | None:
    """The descriptors a sleeping process waits to read; None when it is not in a wait
    for input (or its system call cannot be read)."""
    table = _SYSCALLS.get(platform.machine())
    fields = line.split()
    if table is None or len(fields) < 3 or not fields[0].isdigit():
        return None
    number = int(fields[0])
    try:
        args = [int(field, 16) for field in fields[1:7]]
    except ValueError:
        return None
    if number in table["read"]:
        return [args[0]]
    if number in table["select"]:
        return _selected(pid, args[0], args[1])
    if number in table["poll"]:
        return _polled(pid, args[0], args[1])
    if number in table["epoll"]:
        return _epolled(pid, args[0])
    return None


def _reads_stdin(pid: int, identity: tuple[Identity, ...]) -> bool:
    try:
        line = Path(f"/proc/{pid}/syscall").read_text()
    except OSError:
        line = ""
    fds = _waited_fds(pid, line)
    if fds is None and not line:  # not allowed to see the system call: the wait channel
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/wchan").read_text().strip() in _TERMINAL_WAITS:
                fds = [0]
    return any(_target(pid, fd) in identity for fd in fds or ())


def reader_of(pids: Iterable[int], identity: tuple[Identity, ...]) -> int | None:
    """The first of `pids` asleep reading the stdin `identity` (its device and inode, and
    (-1, its device number) for /dev/tty), or None (blocking: /proc)."""
    for pid in pids:
        if _reads_stdin(pid, identity):
            return pid
    return None


def prompt_of(text: str) -> str:
    """The prompt a program left before it waited: the last line it printed."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return last if len(last) <= 200 else "..." + last[-197:]


def command_line_of(pid: int) -> tuple[str, ...]:
    """The argv of `pid` (empty when it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ()
    return tuple(part.decode("utf-8", "replace") for part in raw.rstrip(b"\0").split(b"\0"))
