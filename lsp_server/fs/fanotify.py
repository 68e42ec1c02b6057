"""Every change on a filesystem with the pid of the process that made it: fanotify's
filesystem marks with directory handles and names (Linux >= 5.9).

The kernel gives this only to a process with CAP_SYS_ADMIN (an unprivileged listener gets
pid 0 for every other process, and no filesystem marks), and turning its directory
handles back into paths takes CAP_DAC_READ_SEARCH. Without them `FilesystemEvents.open`
raises `FanotifyUnavailable`, and callers keep what they have (inotify, attribution by
origin). Blocking; one reader at a time.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import struct
from pathlib import Path

import attrs

MODIFY = 0x2
ATTRIB = 0x4
CLOSE_WRITE = 0x8
MOVED_FROM = 0x40
MOVED_TO = 0x80
CREATE = 0x100
DELETE = 0x200
DELETE_SELF = 0x400
MOVE_SELF = 0x800
Q_OVERFLOW = 0x4000
ONDIR = 0x40000000
CHANGES = MODIFY | ATTRIB | CLOSE_WRITE | MOVED_FROM | MOVED_TO | CREATE | DELETE

# The kernel's interface, shared with fanotify_folders.py: a notification group that
# reports file handles and names (no open file per event), non-blocking.
GROUP_FLAGS = 0x0 | 0x1 | 0x2 | 0x200 | 0x400 | 0x800  # NOTIF, CLOEXEC, NONBLOCK, FID, DFID_NAME
MARK_ADD = 0x1
MARK_REMOVE = 0x2
INFO_FID = 1
INFO_DFID_NAME = 2
INFO_DFID = 3
METADATA = struct.Struct("=IBBHQii")
INFO_HEADER = struct.Struct("=BBH")
HANDLE_HEADER = struct.Struct("=Ii")
READ_BYTES = 256 * 1024
_MARK_FILESYSTEM = 0x100
_AT_FDCWD = -100
_FSID = struct.Struct("=ii")


class FanotifyUnavailable(Exception):
    """This process may not (or this kernel cannot) report who changes what."""


@attrs.frozen
class FsEvent:
    """One change, by the process (thread group) `pid`; `path` (`FilesystemEvents.path`)
    turns the kernel's handle into the changed entry's absolute path."""

    pid: int
    mask: int
    info: bytes = b""

    @property
    def is_folder(self) -> bool:
        return bool(self.mask & ONDIR)

    @property
    def overflow(self) -> bool:
        """The kernel's queue overflowed: changes were lost since the last read."""
        return bool(self.mask & Q_OVERFLOW)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


class FilesystemEvents:
    """One fanotify group: `watch` a folder's whole filesystem, `read` what changed."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._libc = _libc()
        self._libc.fanotify_mark.argtypes = [
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint64,
            ctypes.c_int,
            ctypes.c_char_p,
        ]
        self._libc.open_by_handle_at.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self._mounts: dict[int, int] = {}
        """fsid -> an open folder on that filesystem, to resolve its handles."""
        self._folders: dict[bytes, str] = {}
        """handle -> the folder's path; cleared when any folder moves or goes."""

    @classmethod
    def open(cls) -> FilesystemEvents:
        try:
            libc = _libc()
            fd = libc.fanotify_init(GROUP_FLAGS, os.O_RDONLY | os.O_CLOEXEC)
        except (OSError, AttributeError) as exc:  # no libc symbol: not Linux
            raise FanotifyUnavailable(f"no fanotify here ({exc})") from exc
        if fd < 0:
            code = ctypes.get_errno()
            raise FanotifyUnavailable(
                "fanotify needs CAP_SYS_ADMIN"
                if code == errno.EPERM
                else f"fanotify_init failed: {os.strerror(code)}"
            )
        return cls(fd)

    def fileno(self) -> int:
        return self._fd

    def watch(self, folder: Path, mask: int = CHANGES) -> None:
        """Report `mask` for everything on `folder`'s filesystem (a second call for the same
        filesystem changes nothing)."""
        fsid = os.statvfs(folder).f_fsid
        self._mark(MARK_ADD, folder, mask | ONDIR)
        if fsid not in self._mounts:
            self._mounts[fsid] = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def unwatch(self, folder: Path, mask: int = CHANGES) -> None:
        with contextlib.suppress(FanotifyUnavailable):
            self._mark(MARK_REMOVE, folder, mask | ONDIR)

    def _mark(self, action: int, folder: Path, mask: int) -> None:
        done = self._libc.fanotify_mark(
            self._fd, action | _MARK_FILESYSTEM, mask, _AT_FDCWD, os.fsencode(folder)
        )
        if done < 0:
            code = ctypes.get_errno()
            raise FanotifyUnavailable(f"fanotify cannot watch {folder}: {os.strerror(code)}")

    def read(self) -> list[FsEvent]:
        """What changed since the last read (never blocks; [] when nothing did). Read the
        path of those that matter soon: a handle of a folder removed since resolves to ""."""
        events: list[FsEvent] = []
        while True:
            try:
                data = os.read(self._fd, READ_BYTES)
            except BlockingIOError:
                return events
            if not data:
                return events
            self._parse(data, events)

    def _parse(self, data: bytes, events: list[FsEvent]) -> None:
        offset = 0
        while offset + METADATA.size <= len(data):
            length, _, _, header, mask, fd, pid = METADATA.unpack_from(data, offset)
            if length < METADATA.size:
                return  # malformed: never loop
            if fd >= 0:
                os.close(fd)
            events.append(FsEvent(pid, mask, data[offset + header : offset + length]))
            if mask & ONDIR and mask & (MOVED_FROM | MOVED_TO | DELETE):
                self._folders.clear()  # a folder's path changed: every cached one may
            offset += length

    def path(self, event: FsEvent) -> str:
        """The changed entry's absolute path, as this process sees it ("" when its folder
        is gone or the event names none)."""
        data, start, end = event.info, 0, len(event.info)
        while start + INFO_HEADER.size <= end:
            kind, _, size = INFO_HEADER.unpack_from(data, start)
            if size == 0:
                return ""
            if kind in (INFO_FID, INFO_DFID_NAME, INFO_DFID):
                return self._resolve(data, start + INFO_HEADER.size, start + size, kind)
            start += size
        return ""

    def _resolve(self, data: bytes, start: int, end: int, kind: int) -> str:
        low, high = _FSID.unpack_from(data, start)
        mount = self._mounts.get((low & 0xFFFFFFFF) | (high & 0xFFFFFFFF) << 32)
        handle_start = start + _FSID.size
        handle_bytes, _ = HANDLE_HEADER.unpack_from(data, handle_start)
        handle_end = handle_start + HANDLE_HEADER.size + handle_bytes
        handle = data[handle_start:handle_end]
        key = data[start:handle_end]  # the filesystem's id, then the handle
        name = b""
        if kind == INFO_DFID_NAME:
            name = data[handle_end:end].split(b"\0", 1)[0]
        if mount is None:
            return ""
        folder = self._folder(mount, handle, key if kind != INFO_FID else None)
        if not folder:
            return ""
        if not name or name == b".":
            return folder
        return f"{folder.rstrip('/')}/{os.fsdecode(name)}"

    def _folder(self, mount: int, handle: bytes, key: bytes | None) -> str:
        """The path of a handle's object; a folder's (`key`) is kept until folders move."""
        known = self._folders.get(key) if key is not None else None
        if known is not None:
            return known
        fd = self._libc.open_by_handle_at(mount, handle, os.O_PATH | os.O_CLOEXEC)
        if fd < 0:
            return ""  # gone, or not permitted (no CAP_DAC_READ_SEARCH)
        try:
            path = str(Path(f"/proc/self/fd/{fd}").readlink())
        finally:
            os.close(fd)
        if path.endswith(" (deleted)"):
            return ""
        if key is not None:
            if len(self._folders) > 65536:
                self._folders.clear()
            self._folders[key] = path
        return path

    def close(self) -> None:
        for fd in self._mounts.values():
            os.close(fd)
        self._mounts.clear()
        os.close(self._fd)
