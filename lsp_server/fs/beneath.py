"""Using a path without a check-then-use gap: walk beneath a root from open descriptors.

`Workspace.resolve` decides on a path's real name; between that decision and the use, any
process in the workspace can swap a folder or the file for a symlink pointing outside. So
every use starts again from an open descriptor of the root and reaches the file one
component at a time without following any symlink (`openat2` with RESOLVE_BENEATH |
RESOLVE_NO_SYMLINKS where the kernel has it, else `O_NOFOLLOW | O_DIRECTORY` per component),
and the read, write, create or rename then happens through those descriptors. A symlink
that appears after the decision makes the use fail instead of following it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lsp_server.core.errors import (
    FS_IS_DIRECTORY,
    FS_NOT_A_FILE,
    FS_NOT_FOUND,
    INVALID_ARGUMENT,
    OUTSIDE_SCOPE,
    ToolError,
)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO someone put in place must not hang the server.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_SYS_OPENAT2 = 437  # the same number on every Linux architecture (asm-generic)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
# Errors that mean "a symlink is where a folder or file was decided to be".
_SWAPPED = (errno.ELOOP, errno.EXDEV, errno.EMLINK)


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


@functools.cache
def _openat2_works() -> bool:
    """Whether this kernel (and any seccomp filter around us) lets openat2 through."""
    try:
        fd = _openat2(os.open("/", _DIR_FLAGS), ".", _DIR_FLAGS, close_dir=True)
    except OSError:
        return False
    os.close(fd)
    return True


def _openat2(dir_fd: int, name: str, flags: int, *, close_dir: bool = False) -> int:
    libc = _libc()
    try:
        if libc is None:
            raise OSError(errno.ENOSYS, "no libc")
        how = _open_how(flags)
        fd = int(libc.syscall(_SYS_OPENAT2, dir_fd, os.fsencode(name), how, _HOW_SIZE))
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), name)
        return fd
    finally:
        if close_dir:
            os.close(dir_fd)


_HOW_SIZE = ctypes.sizeof(_OpenHow)


@functools.cache
def _open_how(flags: int) -> Any:
    """openat2's request for `flags`, made once: the kernel only reads it."""
    how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    return ctypes.byref(how)


def swapped(rel: str) -> ToolError:
    return ToolError(
        OUTSIDE_SCOPE,
        f"{rel} (or a folder on its way) was replaced by a symlink while toolhost used it; "
        "nothing was read or written through it",
        "symlinks are not followed here: check the path with ls; if a process keeps "
        "replacing it, stop that process, then retry",
    )


def _parts(root: Path, path: Path) -> tuple[str, ...]:
    """`path.relative_to(root).parts`, on the strings (both are normalised Paths)."""
    below = _below(root, path)
    return tuple(below.split("/")) if below else ()


def _below(root: Path, path: Path) -> str:
    """`path.relative_to(root).as_posix()`, "" for the root itself."""
    text, top = str(path), str(root)
    if text == top:
        return ""
    prefix = top if top.endswith("/") else top + "/"
    if not text.startswith(prefix):
        raise ToolError(
            OUTSIDE_SCOPE, f"{path} is not under {root}", "use a path inside the workspace"
        )
    return text[len(prefix) :]


def open_dir(root: Path, parts: tuple[str, ...], *, create: bool = False) -> int:
    """A descriptor of root/parts, reached without following symlinks; folders created
    on the way when `create`. Raises OSError (ELOOP when a symlink is in the way)."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    if not parts:
        return root_fd
    if not create and _openat2_works():
        try:
            return _openat2(root_fd, "/".join(parts), _DIR_FLAGS)
        finally:
            os.close(root_fd)
    fd = root_fd
    try:
        for part in parts:
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                # Someone else may make it first: open (and check) whatever is there then.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except NotADirectoryError:
                # O_NOFOLLOW | O_DIRECTORY says ENOTDIR for a symlink too: say which it was.
                found = lstat_in(fd, part)
                if found is not None and stat.S_ISLNK(found.st_mode):
                    raise OSError(errno.ELOOP, "a symlink is in the way", part) from None
                raise
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def parent_of(root: Path, path: Path, rel: str, *, create: bool = False) -> Iterator[int]:
    """The open folder holding `path` (beneath `root`); symlinks in the way are refused."""
    parts = _parts(root, path)
    if not parts:
        raise ToolError(FS_NOT_A_FILE, f"{rel} is a workspace root", "name a file inside it")
    try:
        fd = open_dir(root, parts[:-1], create=create)
    except OSError as exc:
        raise translate(exc, rel, path) from None
    try:
        yield fd
    finally:
        os.close(fd)


def open_in(dir_fd: int, name: str, flags: int, rel: str, mode: int = 0o666) -> int:
    """Open `name` in an open folder without following a symlink there."""
    try:
        if _openat2_works() and not flags & os.O_CREAT:
            return _openat2(dir_fd, name, flags)
        return os.open(name, flags | os.O_NOFOLLOW, mode, dir_fd=dir_fd)
    except OSError as exc:
        raise translate(exc, rel) from None


def open_beneath(root: Path, path: Path, rel: str, flags: int) -> int:
    """`path` opened beneath `root` without following a symlink on the way or at its end:
    one openat2 from the root where the kernel has it (a file in a folder costs what a
    file at the root does), else folder by folder (parent_of)."""
    below = _below(root, path)
    if not below:
        raise ToolError(FS_NOT_A_FILE, f"{rel} is a workspace root", "name a file inside it")
    if flags & os.O_CREAT or not _openat2_works():
        with parent_of(root, path, rel) as dir_fd:
            return open_in(dir_fd, path.name, flags, rel)
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return _openat2(root_fd, below, flags, close_dir=True)
    except OSError as exc:
        raise translate(exc, rel, path) from None


def lstat_in(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def translate(exc: OSError, rel: str, path: Path | None = None) -> OSError | ToolError:
    if exc.errno == errno.ELOOP and path is not None and loops(path):
        return link_loop(rel)
    if exc.errno in _SWAPPED:
        return swapped(rel)
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return ToolError(
            FS_NOT_FOUND, f"{rel} does not exist", "check the path (ls or glob can help)"
        )
    return exc


def loops(path: Path) -> bool:
    """Whether following the symlinks of `path` goes round in a loop (not a swap: a link
    that was there all along, which realpath left as it was)."""
    try:
        path.stat()
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def link_loop(rel: str) -> ToolError:
    return ToolError(
        INVALID_ARGUMENT,
        f"{rel} is a loop of symbolic links (or goes through one)",
        "use a path that is not a link loop (ls shows links as `name -> target`)",
    )


def read_regular(
    root: Path, path: Path, rel: str, max_bytes: int
) -> tuple[os.stat_result, bytes | None]:
    """The metadata and bytes of one regular file, both from the same open descriptor, so
    the version recorded is that of exactly the bytes returned (None when the file has
    more than `max_bytes`). Raises ToolError for a missing or non-regular file, and for a
    symlink swapped in on the way."""
    fd = open_beneath(root, path, rel, READ_FLAGS)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ToolError(FS_IS_DIRECTORY, f"{rel} is a directory", "use ls to list it")
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(FS_NOT_A_FILE, f"{rel} is not a regular file", "read a regular file")
        if st.st_size > max_bytes:
            return st, None
        return st, read_all(fd, st.st_size)
    finally:
        os.close(fd)


def read_all(fd: int, size_hint: int, offset: int = 0) -> bytes:
    """Everything from `offset` to the end (pread: the descriptor's position is untouched)."""
    chunks: list[bytes] = []
    while True:
        chunk = os.pread(fd, max(size_hint, 1 << 16), offset)
        offset += len(chunk)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def fsync_dir(dir_fd: int) -> None:
    # Some file systems cannot sync a folder; the rename is atomic all the same.
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)
