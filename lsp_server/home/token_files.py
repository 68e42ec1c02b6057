"""Bearer tokens in files only their user can read (`toolhost serve --tcp`, `toolhost mcp
--http`): a client proves it may connect by reading the file."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_token_file(path: Path) -> str:
    """A new token in a new file only this user can read: written under a temporary name
    (created exclusively, 0600) and renamed over whatever was there, so an old file's mode,
    owner or hard links never carry over."""
    token = secrets.token_urlsafe(24)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.toolhost-tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, (token + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return token
