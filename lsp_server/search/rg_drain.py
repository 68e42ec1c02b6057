"""Reading a running rg's stdout and stderr to the end, on the calling thread, with a
deadline and a stop event (a cancelled call).

rg writes each file's results as it finds them: a search of the standard library wakes
a reader that waits for stdout ~100 times in 40 ms, and each wake-up (a select, a small
read, a parse of a few records) costs CPU that, with both cores busy with rg, comes out
of rg's own. Here stdout is read every `_POLL_SECONDS` (its pipe is enlarged to 1 MiB,
so rg rarely waits for us in between) and at once when rg exits, which a pidfd says:
a few wake-ups per search, half the reader's CPU. Where no pidfd can be had (a kernel
before 5.3, a seccomp filter) every chunk is read as it comes.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
import selectors
import subprocess
import termios
import threading
import time
from collections.abc import Callable

import attrs

# rg's stdout pipe is enlarged to this, so that rg rarely waits for us (Linux caps it at
# /proc/sys/fs/pipe-max-size, 1 MiB by default).
_PIPE_BYTES = 1 << 20
# One read takes at most this much: os.read allocates its whole size first, and a 1 MiB
# buffer costs ~25 us a read (an mmap and its page faults) against ~1 us for 64 KiB.
_READ_BYTES = 1 << 16
# How often stdout, the deadline and `stop` are looked at while rg runs.
_POLL_SECONDS = 0.005
# The same, where every chunk wakes the reader anyway.
_POLL_EACH_CHUNK_SECONDS = 0.05


def drain(
    proc: subprocess.Popen[bytes],
    out: Callable[[bytes], None],
    err: list[bytes],
    stop: threading.Event | None,
    seconds: float,
) -> bool:
    """Read rg's stdout (chunks to `out`) and stderr until both close; kill rg at the
    deadline or once `stop` is set. True when the deadline killed it."""
    assert proc.stdout is not None and proc.stderr is not None
    with contextlib.suppress(OSError):
        fcntl.fcntl(proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    reader = _Reader(proc, out, err, stop, time.monotonic() + seconds)
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        reader.each_chunk()
        return reader.timed_out
    try:
        reader.until_exit(pidfd)
    finally:
        os.close(pidfd)
    return reader.timed_out


@attrs.define
class _Reader:
    proc: subprocess.Popen[bytes]
    out: Callable[[bytes], None]
    err: list[bytes]
    stop: threading.Event | None
    deadline: float
    killed: bool = False
    timed_out: bool = False

    def wait(self, poll: float) -> float:
        """How long to wait for the next event; kills rg when its time is up or the call
        was cancelled."""
        if self.killed:
            return poll
        left = self.deadline - time.monotonic()
        cancelled = self.stop is not None and self.stop.is_set()
        if left <= 0 or cancelled:
            self.timed_out = not cancelled
            self.killed = True
            self.proc.kill()
        return min(poll, max(left, 0.0))

    def until_exit(self, pidfd: int) -> None:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        stdout, stderr = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        waiting = array.array("i", [0])
        exited = False
        with selectors.DefaultSelector() as selector:
            selector.register(pidfd, selectors.EVENT_READ)
            selector.register(stderr, selectors.EVENT_READ)
            while not exited:
                for key, _ in selector.select(self.wait(_POLL_SECONDS)):
                    if key.fd == pidfd:
                        exited = True
                    elif chunk := os.read(stderr, _READ_BYTES):
                        self.err.append(chunk)
                    else:
                        selector.unregister(stderr)
                if not exited and _waiting(stdout, waiting):
                    self.out(os.read(stdout, waiting[0]))
        # rg is gone and all it wrote is in the pipes: read what they hold, without
        # waiting for an end of file that a process forked meanwhile could hold back.
        for fd, sink in ((stdout, self.out), (stderr, self.err.append)):
            while _waiting(fd, waiting) and (chunk := os.read(fd, waiting[0])):
                sink(chunk)

    def each_chunk(self) -> None:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        sinks = {self.proc.stdout.fileno(): self.out, self.proc.stderr.fileno(): self.err.append}
        with selectors.DefaultSelector() as selector:
            for fd in sinks:
                selector.register(fd, selectors.EVENT_READ)
            while sinks:
                for key, _ in selector.select(self.wait(_POLL_EACH_CHUNK_SECONDS)):
                    chunk = os.read(key.fd, _READ_BYTES)
                    if chunk:
                        sinks[key.fd](chunk)
                    else:
                        selector.unregister(key.fd)
                        del sinks[key.fd]


def _waiting(fd: int, count: array.array[int]) -> int:
    """How many bytes the pipe holds (into `count` too)."""
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]
