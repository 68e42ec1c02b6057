"""Reading a running rg's stdout and stderr to the end on the event loop, with a
deadline; a cancelled call kills rg.

rg writes each file's results as it finds them: a search of the standard library would
wake a reader that waits for stdout ~100 times in 40 ms, and each wake-up costs CPU
that, with both cores busy with rg, comes out of rg's own. Here the loop hears rg's
exit (a pidfd) and stderr, and looks at stdout on a timer: first after `_FIRST_POLL`,
then twice as often while each look finds the pipe over a quarter full and half as
often while it finds less (stdout's pipe is enlarged to 1 MiB, so rg rarely waits for
us in between): a 50 ms search of the standard library wakes the loop twice, not ~10
times as a look every 5 ms did (measured: bench/grep_vs_rg.py). Where no
pidfd can be had (a kernel before 5.3, a seccomp filter) every chunk is read as it
comes and the end of both pipes is rg's exit.

The search runs on the loop, not in a worker thread: a thread costs two more wake-ups
in a row (the hop there, the hop back) on every search, and the reading and parsing it
would do holds the interpreter's lock either way. A look at stdout reads at most what
the pipe holds (1 MiB), so a search with a huge output yields the loop between slices.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import fcntl
import os
import subprocess
import termios
from collections.abc import Callable

import attrs

# rg's stdout pipe is enlarged to this, so that rg rarely waits for us (Linux caps it at
# /proc/sys/fs/pipe-max-size, 1 MiB by default).
_PIPE_BYTES = 1 << 20
# One read of stderr takes at most this much (os.read allocates its whole size first).
_READ_BYTES = 1 << 16
# The first look at stdout, and the bounds of the interval between looks.
_FIRST_POLL = 0.02
_MIN_POLL = 0.001
_MAX_POLL = 0.08
# How long a killed rg is waited for before the pipes are read anyway.
_KILLED_WAIT = 5.0


async def drain(
    proc: subprocess.Popen[bytes],
    out: Callable[[bytes], None],
    err: list[bytes],
    seconds: float,
) -> bool:
    """Read rg's stdout (chunks to `out`) and stderr until it exits; kill it at the
    deadline or when the awaiting task is cancelled. True when the deadline killed it."""
    assert proc.stdout is not None and proc.stderr is not None
    with contextlib.suppress(OSError):
        fcntl.fcntl(proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    reader = _Reader(proc, out, err, asyncio.get_running_loop())
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        await reader.run(pidfd, seconds)
    except BaseException:
        proc.kill()
        raise
    finally:
        reader.stop_watching()
        if pidfd is not None:
            os.close(pidfd)
    reader.read_the_rest()
    return reader.timed_out


@attrs.define
class _Reader:
    proc: subprocess.Popen[bytes]
    out: Callable[[bytes], None]
    err: list[bytes]
    loop: asyncio.AbstractEventLoop
    watched: list[int] = attrs.Factory(list)
    # Set when there is something to look at: rg exited, a pipe closed, the timer fired.
    wake: asyncio.Future[None] | None = None
    exited: bool = False
    timed_out: bool = False
    # Chunks read by the stdout callback where there is no pidfd, oldest first.
    arrived: list[bytes] = attrs.Factory(list)
    count: array.array[int] = attrs.Factory(lambda: array.array("i", [0]))

    async def run(self, pidfd: int | None, seconds: float) -> None:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        stdout, stderr = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        self._watch(stderr, lambda: self._read(stderr, self.err.append))
        if pidfd is None:
            # Chunks wait here for the coroutine: what `out` raises must reach the caller,
            # and a reader callback's exception would only reach the loop's log.
            self._watch(stdout, lambda: self._read(stdout, self.arrived.append))
        else:
            self._watch(pidfd, self._exit)
        deadline = self.loop.time() + seconds
        quarter = fcntl.fcntl(stdout, fcntl.F_GETPIPE_SZ) // 4
        poll = _FIRST_POLL
        while not self.exited:
            left = deadline - self.loop.time()
            if left <= 0:
                if self.timed_out:
                    return  # killed and waited for: read what the pipes hold
                self.timed_out = True
                self.proc.kill()
            await self._sleep(min(poll, left) if left > 0 else _KILLED_WAIT)
            self._hand_on_arrived()
            if self.exited or pidfd is None:
                continue
            held = _waiting(stdout, self.count)
            if held:
                self.out(os.read(stdout, held))
            poll = max(poll / 2, _MIN_POLL) if held > quarter else min(poll * 2, _MAX_POLL)

    def stop_watching(self) -> None:
        for fd in self.watched:
            self.loop.remove_reader(fd)
        self.watched.clear()

    def read_the_rest(self) -> None:
        """rg is gone and all it wrote is in the pipes: read what they hold, without
        waiting for an end of file that a process forked meanwhile could hold back."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._hand_on_arrived()
        pipes = ((self.proc.stdout, self.out), (self.proc.stderr, self.err.append))
        for pipe, sink in pipes:
            fd = pipe.fileno()
            while _waiting(fd, self.count) and (chunk := os.read(fd, self.count[0])):
                sink(chunk)

    def _hand_on_arrived(self) -> None:
        chunks, self.arrived = self.arrived, []
        for chunk in chunks:
            self.out(chunk)

    async def _sleep(self, seconds: float) -> None:
        self.wake = self.loop.create_future()
        timer = self.loop.call_later(seconds, self._wake)
        try:
            await self.wake
        finally:
            timer.cancel()

    def _wake(self) -> None:
        if self.wake is not None and not self.wake.done():
            self.wake.set_result(None)

    def _watch(self, fd: int, callback: Callable[[], None]) -> None:
        self.loop.add_reader(fd, callback)
        self.watched.append(fd)

    def _unwatch(self, fd: int) -> None:
        self.loop.remove_reader(fd)
        self.watched.remove(fd)

    def _exit(self) -> None:
        self.exited = True
        self._wake()

    def _read(self, fd: int, sink: Callable[[bytes], None]) -> None:
        chunk = os.read(fd, _READ_BYTES)
        if chunk:
            sink(chunk)
            self._wake()
            return
        self._unwatch(fd)
        if not self.watched:  # no pidfd: both pipes closed means rg has exited
            self._exit()


def _waiting(fd: int, count: array.array[int]) -> int:
    """How many bytes the pipe holds (into `count` too)."""
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]
