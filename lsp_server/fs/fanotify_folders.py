"""Folder watches for any user, from fanotify inode marks: what inotify gives, from a pool
of its own (Linux >= 5.13).

An unprivileged process may place fanotify marks on single folders (not on a whole
filesystem) if it asks for file handles instead of open files. Those marks count against
`fs.fanotify.max_user_marks` (~1 % of memory: 205,049 on a 24 GB machine), a limit no
editor or language server draws on, where inotify's watches are shared with all of them.
So a root too big for its share of inotify watches can still be watched folder by folder.

`FanotifyFolders` has inotify.py's shape: `add_watch(path) -> wd`, `remove_watch(wd)`,
`read()` yielding the same Events with the same mask bits (fanotify's event bits are
inotify's). An event names its folder by the folder's file handle; the handle of each
marked folder is taken when the mark is placed (name_to_handle_at needs no privilege, where
turning a handle back into a path would), so a handle is looked up, never opened.

What differs from inotify, and what is made of it:
- no IN_IGNORED: when a marked folder is deleted the kernel drops its mark after
  DELETE_SELF, so an IN_IGNORED is added behind each DELETE_SELF read;
- a mark is removed through a path: one whose folder has moved stays on the folder until
  it is deleted (its events then name no known handle and are dropped);
- no queue overflow is hidden: FAN_Q_OVERFLOW reads as IN_Q_OVERFLOW.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from collections.abc import Iterator
from pathlib import Path

from lsp_server.fs import fanotify
from lsp_server.fs.fanotify import (
    GROUP_FLAGS,
    HANDLE_HEADER,
    INFO_DFID,
    INFO_DFID_NAME,
    INFO_FID,
    INFO_HEADER,
    MARK_ADD,
    MARK_REMOVE,
    METADATA,
    READ_BYTES,
)
from lsp_server.fs.inotify import IN_DELETE_SELF, IN_IGNORED, IN_Q_OVERFLOW, Event, InotifyError

_MARK_DONT_FOLLOW = 0x4
_MARK_ONLYDIR = 0x8
_EVENT_ON_CHILD = 0x08000000
_AT_EMPTY_PATH = 0x1000
# inotify.DIRECTORY_MASK's events, by the same bits, for the folder and its entries.
MASK = fanotify.CHANGES | fanotify.DELETE_SELF | fanotify.MOVE_SELF | fanotify.ONDIR
_FSID = struct.Struct("=II")
_MAX_HANDLE = 128


def max_user_marks() -> int | None:
    """fs.fanotify.max_user_marks (None where it cannot be read: no such pool here)."""
    try:
        return int(Path("/proc/sys/fs/fanotify/max_user_marks").read_text())
    except (OSError, ValueError):
        return None


class _FileHandle(ctypes.Structure):
    _fields_ = [
        ("handle_bytes", ctypes.c_uint),
        ("handle_type", ctypes.c_int),
        ("f_handle", ctypes.c_ubyte * _MAX_HANDLE),
    ]


class FanotifyFolders:
    """One fanotify group of folder marks (non-blocking); close it when done. Raises
    InotifyError (its `errno` set) where the kernel or the filesystem refuses."""

    def __init__(self, group: int | None = None) -> None:
        """A new group, or the one whose descriptor is `group` (folder_marker.py's child
        places marks on its parent's group)."""
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            init, mark, to_handle = (
                libc.fanotify_init, libc.fanotify_mark, libc.name_to_handle_at
            )  # fmt: skip
        except (OSError, AttributeError) as exc:  # not Linux
            raise InotifyError(f"no fanotify here ({exc})") from exc
        mark.argtypes = [
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint64,
            ctypes.c_int,
            ctypes.c_char_p,
        ]
        to_handle.argtypes = [
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.POINTER(_FileHandle),
            ctypes.POINTER(ctypes.c_int),
            ctypes.c_int,
        ]
        self._mark, self._to_handle = mark, to_handle
        fd = init(GROUP_FLAGS, os.O_RDONLY | os.O_CLOEXEC) if group is None else group
        if fd < 0:
            code = ctypes.get_errno()
            raise InotifyError(code, f"fanotify_init: {os.strerror(code)}")
        self.fd: int = fd
        self._wds: dict[bytes, int] = {}  # the folder's filesystem id and handle -> wd
        self._paths: dict[int, tuple[str, bytes]] = {}  # wd -> (path, key)
        self._fsids: dict[int, int] = {}  # mount id -> its filesystem's id
        self._next = 1
        # One handle and mount id, filled by each call (new ctypes objects a folder cost as
        # much as the system call): the caller holds its watcher's lock.
        self._handle = _FileHandle()
        self._mount = ctypes.c_int()
        self._refs = (ctypes.byref(self._handle), ctypes.byref(self._mount))
        self._handle_at = ctypes.addressof(self._handle) + _FileHandle.f_handle.offset

    def add_watch(self, path: str) -> int:
        """Mark one folder (not followed if a link); the same folder again keeps its wd."""
        return self.add_watch_probing(path, None)[0]

    def add_watch_probing(self, path: str, probe: str | None) -> tuple[int, bool, int]:
        """`add_watch`, whether the folder holds an entry named `probe` and its change time
        once marked (both looked up through the open folder: the one marked)."""
        key, found, changed = self.place(path, probe)
        return self.adopt(path, key), found, changed

    def place(self, path: str, probe: str | None) -> tuple[bytes, bool, int]:
        """Mark one folder: its key (filesystem id and handle: what its events name), and
        `add_watch_probing`'s probe and change time. No wd yet (`adopt`)."""
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            folder = os.open(path, flags)
        except OSError as exc:
            raise InotifyError(exc.errno, f"fanotify cannot watch {path}: {exc.strerror}") from exc
        found, changed = False, 0
        try:
            key = self._key(folder, path)
            # The open folder is what gets the mark: no other folder swapped in at `path`.
            done = self._mark(
                self.fd, MARK_ADD | _MARK_ONLYDIR, MASK | _EVENT_ON_CHILD, folder, None
            )
            if done < 0:
                code = ctypes.get_errno()
                raise InotifyError(code, f"fanotify_mark {path}: {os.strerror(code)}")
            if probe is not None:
                changed = os.fstat(folder).st_ctime_ns
                found = os.access(probe, os.F_OK, dir_fd=folder, follow_symlinks=False)
        finally:
            os.close(folder)
        return key, found, changed

    def adopt(self, path: str, key: bytes) -> int:
        """The wd of the folder at `path` marked with `key` (the same folder again: its wd)."""
        wd = self._wds.get(key)
        if wd is None:
            wd, self._next = self._next, self._next + 1
            self._wds[key] = wd
        self._paths[wd] = (path, key)
        return wd

    def _key(self, folder: int, path: str) -> bytes:
        handle = self._handle
        handle.handle_bytes = _MAX_HANDLE
        if self._to_handle(folder, b"", *self._refs, _AT_EMPTY_PATH):
            code = ctypes.get_errno()
            raise InotifyError(code, f"name_to_handle_at {path}: {os.strerror(code)}")
        mount = self._mount.value
        fsid = self._fsids.get(mount)
        if fsid is None:
            fsid = self._fsids[mount] = os.fstatvfs(folder).f_fsid
        size = min(handle.handle_bytes, _MAX_HANDLE)
        return (
            _FSID.pack(fsid & 0xFFFFFFFF, (fsid >> 32) & 0xFFFFFFFF)
            + HANDLE_HEADER.pack(size, handle.handle_type)
            + ctypes.string_at(self._handle_at, size)
        )

    def remove_watch(self, wd: int) -> None:
        """Unmark through the path it was marked at (a folder moved since keeps its mark
        until it is deleted; its events are dropped)."""
        known = self._paths.pop(wd, None)
        if known is None:
            return
        path, key = known
        self._wds.pop(key, None)
        flags = MARK_REMOVE | _MARK_ONLYDIR | _MARK_DONT_FOLLOW
        self._mark(self.fd, flags, MASK | _EVENT_ON_CHILD, -100, os.fsencode(path))

    def read(self) -> Iterator[Event]:
        """Every queued event, until the queue is empty."""
        while True:
            try:
                data = os.read(self.fd, READ_BYTES)
            except BlockingIOError:
                return
            if not data:
                return
            yield from self._parse(data)

    def _parse(self, data: bytes) -> Iterator[Event]:
        offset = 0
        while offset + METADATA.size <= len(data):
            length, _, _, header, mask, fd, _pid = METADATA.unpack_from(data, offset)
            if length < METADATA.size or header < METADATA.size:
                return  # malformed: never loop
            if fd >= 0:
                os.close(fd)
            if mask & fanotify.Q_OVERFLOW:
                yield Event(-1, IN_Q_OVERFLOW, "")
            else:
                found = _folder_and_name(data, offset + header, offset + length)
                wd = self._wds.get(found[0]) if found is not None else None
                if wd is not None and found is not None:
                    yield Event(wd, mask & 0xFFFFFFFF, found[1])
                    if mask & IN_DELETE_SELF:
                        self._forget(wd)
                        yield Event(wd, IN_IGNORED, "")
            offset += length

    def _forget(self, wd: int) -> None:
        known = self._paths.pop(wd, None)
        if known is not None:
            self._wds.pop(known[1], None)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _folder_and_name(data: bytes, start: int, end: int) -> tuple[bytes, str] | None:
    """(the folder's key, the entry's name) of an event's records: the folder holding the
    entry (a name record), else the object itself (a marked folder's own event)."""
    own: bytes | None = None
    while start + INFO_HEADER.size <= end:
        kind, _, size = INFO_HEADER.unpack_from(data, start)
        if size < INFO_HEADER.size + _FSID.size + HANDLE_HEADER.size or start + size > end:
            return None
        body = start + INFO_HEADER.size
        handle_bytes, _ = HANDLE_HEADER.unpack_from(data, body + _FSID.size)
        key_end = body + _FSID.size + HANDLE_HEADER.size + handle_bytes
        if key_end > start + size:
            return None
        key = data[body:key_end]
        if kind == INFO_DFID_NAME:
            name = data[key_end : start + size].split(b"\0", 1)[0]
            return key, "" if name == b"." else os.fsdecode(name)
        if kind in (INFO_DFID, INFO_FID) and own is None:
            own = key
        start += size
    return None if own is None else (own, "")


def available() -> str | None:
    """None when folder marks can be placed here, else why not."""
    try:
        FanotifyFolders().close()
    except InotifyError as exc:
        if exc.errno in (errno.EPERM, errno.EINVAL, errno.ENOSYS):
            return "fanotify folder marks need Linux 5.13 or later"
        return str(exc)
    return None
