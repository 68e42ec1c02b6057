"""Linux inotify through ctypes: an instance, directory watches, and its raw events parsed.

Only what checkpoints/watching/watcher.py needs. An event is queued by the kernel in the
system call that made the change, so reading the queue dry after a command ended sees every
change it made through a watched directory (or learns that events were lost: IN_Q_OVERFLOW).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
from collections.abc import Iterator

import attrs

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x1000000
IN_DONT_FOLLOW = 0x2000000
IN_ISDIR = 0x40000000

DIRECTORY_MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
    | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW
)  # fmt: skip

_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)
_NONBLOCK = os.O_NONBLOCK
_CLOEXEC = os.O_CLOEXEC


class InotifyError(OSError):
    """inotify could not be used (not Linux, no instances left, no watches left)."""


@attrs.frozen
class Event:
    wd: int
    mask: int
    name: str


def _libc() -> ctypes.CDLL:
    name = ctypes.util.find_library("c")
    if name is None:
        raise InotifyError("no C library to call inotify through")
    libc = ctypes.CDLL(name, use_errno=True)
    if not hasattr(libc, "inotify_init1"):
        raise InotifyError("this system has no inotify")
    return libc


class Inotify:
    """One inotify instance (non-blocking); close it when done."""

    def __init__(self) -> None:
        self._libc = _libc()
        fd = self._libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        if fd < 0:
            errno = ctypes.get_errno()
            raise InotifyError(errno, f"inotify_init1: {os.strerror(errno)}")
        self.fd: int = fd

    def add_watch(self, path: str) -> int:
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), DIRECTORY_MASK)
        if wd < 0:
            errno = ctypes.get_errno()
            raise InotifyError(errno, f"inotify_add_watch {path}: {os.strerror(errno)}")
        return int(wd)

    def remove_watch(self, wd: int) -> None:
        self._libc.inotify_rm_watch(self.fd, wd)  # an already-gone watch is fine

    def read(self) -> Iterator[Event]:
        """Every queued event, until the queue is empty."""
        while True:
            try:
                data = os.read(self.fd, 256 * 1024)
            except BlockingIOError:
                return
            yield from parse(data)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def parse(data: bytes) -> Iterator[Event]:
    offset = 0
    while offset + _HEADER.size <= len(data):
        wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
        offset += _HEADER.size
        raw = data[offset : offset + length].rstrip(b"\0")
        offset += length
        yield Event(wd, mask, os.fsdecode(raw))


def record(wd: int, mask: int, name: str = "") -> bytes:
    """The bytes the kernel would queue for an event (tests feed them to the watcher)."""
    raw = os.fsencode(name)
    if raw:
        raw += b"\0" * (16 - len(raw) % 16)
    return _HEADER.pack(wd, mask, 0, len(raw)) + raw
