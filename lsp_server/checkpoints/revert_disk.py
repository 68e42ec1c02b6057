"""A revert's reads and writes on disk, beneath the root's open descriptor, never through a link.

Between a call and its revert, an agent's commands can leave anything at a recorded path: a
folder on the way replaced by a symlink to a folder outside the root (or to `/`,
`/proc/self/root`), a symlink, a hard link of an outside file, a FIFO or a device at the path
itself. A revert that followed any of them would create, delete or overwrite files outside
the root. So, like the writers (fs/diskwrite.py), a revert starts from an open
descriptor of the root and goes one folder at a time with O_NOFOLLOW (a missing folder is
made with mkdirat in the folder held open); the last check, the rename and the unlink all
happen in the folder it opened. Whatever stands in the way is a `Blocked` state: the path
becomes a conflict that says why, and nothing is followed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from lsp_server.checkpoints.restore import LINK_MODE, Blocked, Present, Put, State
from lsp_server.checkpoints.shadow import objects
from lsp_server.checkpoints.shadow.large_files import pointer_blob
from lsp_server.fs import beneath, hardlinks, leftover_temps, textio

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_NOT_FOLLOWED = "a revert does not follow links"
_RACED = "changed while the revert ran"
_Maker = Callable[[str], None]  # makes a temporary entry of the given name


def plain_parts(rel: str) -> tuple[str, ...] | None:
    """The components of a recorded name; None unless it is a plain path below the root
    (not absolute, no empty, `.` or `..` component, no NUL byte)."""
    parts = tuple(rel.split("/"))
    if not rel or "\0" in rel or any(part in ("", ".", "..") for part in parts):
        return None
    return parts


def read_states(root: Path, rels: Iterable[str], max_bytes: int) -> dict[str, State]:
    """What each recorded path holds now, as seen beneath the root (blocking)."""
    return {rel: read_state(root, rel, max_bytes) for rel in rels}


def read_state(root: Path, rel: str, max_bytes: int, *, hard_links: bool = True) -> State:
    """`hard_links`: a file with a name outside the root is Blocked (a scan of the root
    looks for its names); False: read like any file (a checkpoint's record of it)."""
    parts = plain_parts(rel)
    if parts is None:
        return _not_plain(rel)
    try:
        with _parent(root, parts, create=False) as found:
            if found is None or isinstance(found, Blocked):
                return found
            return _state_in(root, found, parts[-1], max_bytes, hard_links)[0]
    except OSError as exc:
        return Blocked(f"could not be read ({exc.strerror or exc})")


def apply(root: Path, put: Put, max_bytes: int) -> str | None:
    """Make `put.path` hold `put` if it still holds `put.current` (blocking); None when done,
    else why not (the path is then a conflict and nothing was changed there)."""
    parts = plain_parts(put.path)
    if parts is None:
        return _not_plain(put.path).reason
    try:
        with _parent(root, parts, create=put.data is not None) as found:
            if isinstance(found, Blocked):
                return found.reason
            if found is None:  # a folder on the way is gone: so is the path
                return None if put.current is None else f"deleted: {_RACED}"
            return _put_in(root, found, parts[-1], put, max_bytes)
    except OSError as exc:
        return f"could not be written ({exc.strerror or exc})"


def set_exec_bits(root: Path, rel: str, git_mode: int) -> None:
    """Set or clear the executable bits the record has (after the editor wrote the text):
    on the file itself, never through a link, nor on a file with other names."""
    parts = plain_parts(rel)
    if parts is None:
        return
    with contextlib.suppress(OSError), _parent(root, parts, create=False) as found:
        if found is None or isinstance(found, Blocked):
            return
        fd = os.open(parts[-1], beneath.READ_FLAGS, dir_fd=found)
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                wanted = _permissions(stat.S_IMODE(st.st_mode), git_mode)
                if wanted != stat.S_IMODE(st.st_mode):
                    os.fchmod(fd, wanted)
        finally:
            os.close(fd)


# -- walking beneath the root -------------------------------------------------------------


@contextmanager
def _parent(root: Path, parts: tuple[str, ...], *, create: bool) -> Iterator[int | Blocked | None]:
    """The open folder that holds the last of `parts`, reached from the root without
    following a link; None when a folder on the way is missing (and not `create`)."""
    found = _walk(root, parts[:-1], create=create)
    try:
        yield found
    finally:
        if isinstance(found, int):
            os.close(found)


def _walk(root: Path, folders: tuple[str, ...], *, create: bool) -> int | Blocked | None:
    if not create:
        # One openat2 where the kernel has it; when anything is in the way (or missing),
        # the walk below finds out what and where.
        with contextlib.suppress(OSError):
            return beneath.open_dir(root, folders)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, part in enumerate(folders):
            opened = _open_folder(fd, part, "/".join(folders[: depth + 1]), create=create)
            os.close(fd)
            if not isinstance(opened, int):
                return opened
            fd = opened
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_folder(fd: int, name: str, shown: str, *, create: bool) -> int | Blocked | None:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            return None
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        return _in_the_way(fd, name, shown)
    # Made here, then opened as any folder: a link someone put there first is refused.
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=fd)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP, errno.ENOENT):
            raise
        return _in_the_way(fd, name, shown)


def _in_the_way(fd: int, name: str, shown: str) -> Blocked:
    """Why the folder `shown` could not be entered: what is there instead."""
    found = beneath.lstat_in(fd, name)
    if found is None:
        return Blocked(f"the folder {shown} {_RACED}")
    if stat.S_ISLNK(found.st_mode):
        why = f"the folder {shown} is a symbolic link{_target(fd, name)}: {_NOT_FOLLOWED}"
        return Blocked(why, shown)
    return Blocked(f"the folder {shown} is now {_kind(found.st_mode)}, not a folder", shown)


# -- one path in its open folder ----------------------------------------------------------


def _state_in(
    root: Path, dir_fd: int, name: str, max_bytes: int, hard_links: bool = True
) -> tuple[State, os.stat_result | None]:
    """The state of `name` in an open folder, with the stat of the regular file read."""
    found = beneath.lstat_in(dir_fd, name)
    if found is None:
        return None, None
    if stat.S_ISLNK(found.st_mode):
        return Present.of(os.fsencode(os.readlink(name, dir_fd=dir_fd)), LINK_MODE), None
    if not stat.S_ISREG(found.st_mode):
        return Blocked(f"is now {_kind(found.st_mode)}, not a file"), None
    try:
        fd = os.open(name, beneath.READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return Blocked(_RACED), None
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (found.st_dev, found.st_ino) or not stat.S_ISREG(st.st_mode):
            return Blocked(_RACED), None
        if st.st_nlink > 1 and hard_links:
            names = hardlinks.names_of(root, st)
            if names is None or len(names) < st.st_nlink:
                return _hard_link(st.st_nlink, names), None
        mode = 0o100755 if st.st_mode & 0o100 else 0o100644
        if st.st_size > max_bytes:
            pointer = pointer_blob(st.st_size, _blob_id(fd, st.st_size))
            return Present(None, mode, objects.object_id("blob", pointer)), st
        return Present.of(beneath.read_all(fd, st.st_size), mode), st
    finally:
        os.close(fd)


def _put_in(root: Path, dir_fd: int, name: str, put: Put, max_bytes: int) -> str | None:
    # Compare and swap: the path must still hold what the decision was made on.
    now, st = _state_in(root, dir_fd, name, max_bytes)
    if isinstance(now, Blocked):
        return now.reason
    if now != put.current:
        return _RACED
    if put.data is None:
        try:
            os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{_RACED} ({exc.strerror})"
    elif put.mode == LINK_MODE:
        _publish(dir_fd, name, lambda temp: os.symlink(put.data or b"", temp, dir_fd=dir_fd))
    else:
        bits = textio.new_file_mode() if st is None else stat.S_IMODE(st.st_mode)
        data, wanted = put.data, _permissions(bits, put.mode)
        _publish(dir_fd, name, lambda temp: _write_file(dir_fd, temp, data, wanted, st))
    beneath.fsync_dir(dir_fd)
    return None


def _publish(dir_fd: int, name: str, make: _Maker) -> None:
    """Make a temporary entry next to `name`, then rename it over `name` (which replaces a
    link or a file's name, never writes through it)."""
    temp = leftover_temps.temp_name(name)
    try:
        make(temp)
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise


def _write_file(dir_fd: int, temp: str, data: bytes, bits: int, old: os.stat_result | None) -> None:
    fd = os.open(temp, _TEMP_FLAGS, bits, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if old is not None:
            with contextlib.suppress(PermissionError):
                os.fchown(fd, old.st_uid, old.st_gid)
        os.fchmod(fd, bits)  # exactly these bits, whatever the umask
        os.fsync(fd)
    finally:
        os.close(fd)


# -- names and reasons --------------------------------------------------------------------


def _permissions(bits: int, git_mode: int) -> int:
    """`bits` with the executable bits git records set or cleared."""
    if git_mode == 0o100755:
        return bits | ((bits & 0o444) >> 2)
    return bits & ~0o111


def _blob_id(fd: int, size: int) -> str:
    digest = hashlib.sha1(f"blob {size}\0".encode(), usedforsecurity=False)
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest()


def _target(dir_fd: int, name: str) -> str:
    try:
        return f" (to {os.readlink(name, dir_fd=dir_fd)})"
    except OSError:
        return ""


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISREG, "a file"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


def _hard_link(count: int, inside: list[Path] | None) -> Blocked:
    where = (
        "the root is too large to find them all"
        if inside is None
        else f"{count - len(inside)} of them outside the root"
    )
    return Blocked(
        f"is a file with {count} names (hard links), {where}: a revert does not write "
        "through it, and replacing this name would leave the call's change in the others "
        "(remove the other names, or replace the link with a copy: cp, not ln; then revert "
        "again)"
    )


def _not_plain(rel: str) -> Blocked:
    return Blocked(f"its recorded name {rel!r} is not a plain path inside the root")
