"""Publishing a change on disk through open descriptors, with the last check at the rename.

Every function runs under the file's mutation lock (dispatch holds it) and works in the
folder it opened beneath the root (fs/beneath.py): the temporary file, the version
check, the rename, the link and the unlink all use that one open folder, so a symlink
swapped in meanwhile cannot redirect them. The observed version is checked against the
open file immediately before the rename; an outside write that still lands in the old
file in the few microseconds between is detected after the rename and reported, never
silently dropped.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import stat
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from lsp_server.core.errors import FS_NOT_A_FILE, FS_STALE_VERSION, ToolError
from lsp_server.fs import beneath, leftover_temps
from lsp_server.fs.textio import FileVersion, version_from_stat

VersionCheck = Callable[[FileVersion], None]
"""Raises FS_STALE_VERSION when the version found is not the one the session observed."""
Replacing = Callable[[bytes | None, int], None]
"""Told the bytes (None: too large to hash) and st_mode the file held at the last check,
right before the rename (the checkpoint of the call keeps them)."""

LOST_BYTES_SHOWN = 4000
# How long a replace waits for outside writers to close the file it replaced.
WRITER_GRACE_SECONDS = 0.2
# How long a publish waits for another toolhost process publishing to the same file.
PUBLISH_WAIT_SECONDS = 5.0


@attrs.frozen
class Written:
    """What a publish left on disk: the new file's version (of exactly the bytes written),
    a note when an outside write was overtaken, and how long the last window stayed open."""

    version: FileVersion
    note: str | None = None
    window_ns: int = 0
    mode: int = 0
    """The new file's st_mode (a replace keeps the old one's)."""


# Test-only: a file to create once a temp file is written, after which the write stalls
# until the process is killed (tests kill `toolhost serve` in the middle of a write).
_STALL_MARKER = os.environ.get("TOOLHOST_TEST_STALL_WRITES")


def _stall_for_tests() -> None:
    if _STALL_MARKER:
        Path(_STALL_MARKER).touch()
        while True:
            time.sleep(3600)


def _write_temp(dir_fd: int, name: str, data: bytes, mode: int) -> tuple[str, int]:
    """A fully written and synced temporary file next to `name`: (its name, an open fd)."""
    temp = leftover_temps.temp_name(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, mode, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        _stall_for_tests()
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    return temp, fd


def _current(fd: int, hash_limit: int) -> tuple[os.stat_result, FileVersion, bytes | None]:
    st = os.fstat(fd)
    data = beneath.read_all(fd, st.st_size) if st.st_size <= hash_limit else None
    return st, version_from_stat(st, data), data


def _require_named(dir_fd: int, name: str, st: os.stat_result, rel: str) -> None:
    """The name still refers to the file whose descriptor was checked."""
    now = beneath.lstat_in(dir_fd, name)
    if now is None or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        raise ToolError(
            FS_STALE_VERSION,
            f"{rel} was replaced by another file while toolhost wrote it",
            "read the file again (any window), then redo the change",
        )


def _publishing(fd: int, rel: str) -> None:
    """Hold the file (its inode) for the last check and the rename: another toolhost
    process publishing to the same file waits here, then finds it replaced and refuses.
    Without this, two servers on one folder could both pass their check before either
    renamed, and the second rename would drop the first one's change. Released when `fd`
    is closed. Programs that do not take the lock are detected, not excluded."""
    deadline = time.monotonic() + PUBLISH_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise ToolError(
                    FS_STALE_VERSION,
                    f"another writer kept {rel} locked for {PUBLISH_WAIT_SECONDS:.0f} s",
                    "read the file again (any window), then redo the change",
                ) from None
        except OSError:
            return  # a file system without flock: the checks alone apply
        time.sleep(0.0005)


def _open_existing(dir_fd: int, name: str, rel: str) -> int:
    fd = beneath.open_in(dir_fd, name, beneath.READ_FLAGS, rel)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ToolError(FS_NOT_A_FILE, f"{rel} is not a regular file", "write a regular file")
    return fd


def replace(
    root: Path,
    path: Path,
    rel: str,
    data: bytes,
    check: VersionCheck,
    hash_limit: int,
    replacing: Replacing | None = None,
) -> Written:
    """Replace `path` with `data` if it still holds the observed version; keeps the mode
    and, where permitted, the owner. Never writes into the old file (nor its hard links)."""
    with beneath.parent_of(root, path, rel) as dir_fd:
        old_fd = _open_existing(dir_fd, path.name, rel)
        try:
            old = os.fstat(old_fd)
            temp, temp_fd = _write_temp(dir_fd, path.name, data, stat.S_IMODE(old.st_mode))
            try:
                with contextlib.suppress(PermissionError):
                    os.fchown(temp_fd, old.st_uid, old.st_gid)
                os.fchmod(temp_fd, stat.S_IMODE(old.st_mode))
                _publishing(old_fd, rel)
                checked, version, replaced = _current(old_fd, hash_limit)
                check(version)
                _require_named(dir_fd, path.name, checked, rel)
                if replacing is not None:
                    replacing(replaced, checked.st_mode)
                opened = time.perf_counter_ns()
                os.rename(temp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                window = time.perf_counter_ns() - opened
            except BaseException:
                os.close(temp_fd)
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
                raise
            still_open = not _writers_gone(old_fd)
            note = _overtaken(old_fd, checked, rel, still_open)
            beneath.fsync_dir(dir_fd)
            written = _version_of(temp_fd, data, hash_limit)
        finally:
            os.close(old_fd)
    return Written(written, note, window, stat.S_IFREG | stat.S_IMODE(old.st_mode))


def _writers_gone(old_fd: int) -> bool:
    """Wait (briefly) until no process has the replaced file open for writing, so that
    whatever it wrote there is counted by `_overtaken`. A read lease can be taken only when
    nobody has the file open for writing; it is given back at once. False only when
    writers stay past the grace time; True also where leases are unavailable (not the
    file's owner, a file system without leases): there only the detection applies."""
    deadline = time.monotonic() + WRITER_GRACE_SECONDS
    while True:
        try:
            # A lease break would signal this process: make that signal one it ignores.
            fcntl.fcntl(old_fd, fcntl.F_SETSIG, signal.SIGURG)
            fcntl.fcntl(old_fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
            fcntl.fcntl(old_fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
            return True
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EBUSY):
                return True
            if time.monotonic() > deadline:
                return False
        time.sleep(0.0002)


def _overtaken(old_fd: int, checked: os.stat_result, rel: str, still_open: bool) -> str | None:
    """Say so when an outside process wrote to the old file after the last check."""
    after = os.fstat(old_fd)
    if (after.st_size, after.st_mtime_ns) == (checked.st_size, checked.st_mtime_ns):
        if not still_open:
            return None
        return (
            f"WARNING: another process still has the old {rel} open for writing; what it "
            "writes there from now on does not reach the file. Check the file later."
        )
    if after.st_size > checked.st_size:
        extra = beneath.read_all(old_fd, after.st_size - checked.st_size, checked.st_size)
        shown = extra[:LOST_BYTES_SHOWN].decode("utf-8", "replace")
        cut = "" if len(extra) <= LOST_BYTES_SHOWN else f"\n[... {len(extra)} bytes in all]"
        return (
            f"WARNING: another process appended {len(extra)} bytes to {rel} while toolhost "
            "replaced it; they are NOT in the file now. They were:\n"
            f"{shown}{cut}\nRe-add them if they belong there (read the file first)."
        )
    return (
        f"WARNING: another process changed {rel} while toolhost replaced it; that change is "
        "NOT in the file now. Read the file and check."
    )


def _version_of(fd: int, data: bytes, hash_limit: int) -> FileVersion:
    st = os.fstat(fd)  # after the rename: its ctime is part of the version
    os.close(fd)
    return version_from_stat(st, data if len(data) <= hash_limit else None)


def create(root: Path, path: Path, rel: str, data: bytes, hash_limit: int) -> Written:
    """Create `path` with all of `data` at once (parents included); FileExistsError when
    anything is already there."""
    with beneath.parent_of(root, path, rel, create=True) as dir_fd:
        temp, temp_fd = _write_temp(dir_fd, path.name, data, 0o666)  # the umask applies
        try:
            # link() never replaces (nor follows a symlink): a concurrent creator wins.
            os.link(temp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except BaseException:
            os.close(temp_fd)
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
        beneath.fsync_dir(dir_fd)
        return Written(_version_of(temp_fd, data, hash_limit))


def move(
    root: Path,
    source: tuple[Path, str],
    destination: tuple[Path, Path, str],
    check: VersionCheck,
    hash_limit: int,
) -> Written:
    """Move a file that still holds the observed version, never replacing the destination
    (FileExistsError). `source` is (path, label); `destination` is (its root, path, label)."""
    path, rel = source
    dest_root, dest, dest_rel = destination
    with (
        beneath.parent_of(root, path, rel) as src_dir,
        beneath.parent_of(dest_root, dest, dest_rel, create=True) as dst_dir,
    ):
        fd = _open_existing(src_dir, path.name, rel)
        try:
            _publishing(fd, rel)
            checked, version, _ = _current(fd, hash_limit)
            check(version)
            _require_named(src_dir, path.name, checked, rel)
            try:
                os.link(
                    path.name,
                    dest.name,
                    src_dir_fd=src_dir,
                    dst_dir_fd=dst_dir,
                    follow_symlinks=False,
                )
            except OSError as exc:
                if isinstance(exc, FileExistsError) or exc.errno != errno.EXDEV:
                    raise
                data = beneath.read_all(fd, checked.st_size)
                created = create(dest_root, dest, dest_rel, data, hash_limit)
                os.unlink(path.name, dir_fd=src_dir)
                return created
            _undo_if_other(dst_dir, dest.name, checked, rel)
            os.unlink(path.name, dir_fd=src_dir)
            beneath.fsync_dir(src_dir)
            beneath.fsync_dir(dst_dir)
            st = os.fstat(fd)
        finally:
            os.close(fd)
    return Written(_moved(st, version))


def _undo_if_other(dir_fd: int, name: str, checked: os.stat_result, rel: str) -> None:
    """The link made is of the checked file, not of something swapped in at the last
    instant (a symlink would be linked as itself): otherwise take it back and refuse."""
    made = beneath.lstat_in(dir_fd, name)
    if made is not None and (made.st_dev, made.st_ino) != (checked.st_dev, checked.st_ino):
        os.unlink(name, dir_fd=dir_fd)
        raise beneath.swapped(rel)


def _moved(st: os.stat_result, before: FileVersion) -> FileVersion:
    """The moved file's version: its new metadata, the same bytes."""
    return attrs.evolve(version_from_stat(st, None), sha256=before.sha256)


def delete(root: Path, path: Path, rel: str, check: VersionCheck, hash_limit: int) -> None:
    with beneath.parent_of(root, path, rel) as dir_fd:
        fd = _open_existing(dir_fd, path.name, rel)
        try:
            _publishing(fd, rel)
            checked, version, _ = _current(fd, hash_limit)
            check(version)
            _require_named(dir_fd, path.name, checked, rel)
            os.unlink(path.name, dir_fd=dir_fd)
            beneath.fsync_dir(dir_fd)
        finally:
            os.close(fd)
