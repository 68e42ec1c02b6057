"""The client's stdin and stdout kept for the face that serves them (`toolhost serve`'s
stdio, `toolhost mcp`'s front). The standard library only: the front uses it before it
answers."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def private_stdio() -> Iterator[tuple[int, int]]:
    """Private duplicates of fd 0 and 1 (close-on-exec). While they are served, fd 0 reads
    the null device and fd 1 writes to stderr: nothing else in the process or a child (a
    command, a language server, a worker pool, a stray print) reads the client's messages
    or writes into the middle of an answer. fd 0 and 1 are put back afterwards."""
    private_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    private_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    try:
        yield private_in, private_out
    finally:
        os.dup2(private_in, 0)
        os.dup2(private_out, 1)
        os.close(private_in)
        os.close(private_out)
