"""A folder only this user can enter: where sockets that hand out toolhost's powers live (the
attach sockets of editors' runtimes, the warm process's). The standard library only: the
warm start's front uses it before anything else is imported."""

from __future__ import annotations

import os
import stat
from pathlib import Path

# sun_path holds 108 bytes on Linux (104 on the BSDs): stay under both.
MAX_SOCKET_PATH = 100


class UnsafeFolder(Exception):
    """The folder exists but is not private to this user."""


def private_folder(path: Path) -> Path:
    """Create `path` as a 0700 folder, or check that the existing one is ours and private."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFolder(f"{path} is not a folder")
    if info.st_uid != os.getuid():
        raise UnsafeFolder(f"{path} belongs to another user (uid {info.st_uid})")
    if stat.S_IMODE(info.st_mode) != 0o700:
        path.chmod(0o700)
    return path


def socket_path(folder: Path, name: str) -> Path:
    """`name` in the private `folder`, or in /tmp/toolhost-<uid> when that path is too long
    for a Unix socket's address."""
    path = private_folder(folder) / name
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        path = private_folder(Path("/tmp") / f"toolhost-{os.getuid()}") / name
    return path
