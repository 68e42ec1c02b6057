"""Discovery records: how `toolhost mcp` finds the `toolhost serve` an editor started.

Each listening server owns a private folder entry: a Unix socket (0600) and a record file
(0600) naming the workspace root, the socket, the server's pid and a random token. The folder
is `Dirs.attach_folder` (`$XDG_RUNTIME_DIR/toolhost`, or `run/` under the state folder); it
must be a 0700 folder owned by this user, or it is not used at all.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Any

import attrs

from lsp_server.home.private_folder import private_folder, socket_path
from lsp_server.procs.children import pid_alive

log = logging.getLogger(__name__)

RECORD_VERSION = 1


@attrs.frozen
class Record:
    root: Path
    socket: Path
    pid: int
    token: str
    file: Path
    started: float = 0.0
    version: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "recordVersion": RECORD_VERSION,
            "root": str(self.root),
            "socket": str(self.socket),
            "pid": self.pid,
            "token": self.token,
            "started": self.started,
            "version": self.version,
        }


def _key(root: Path) -> str:
    return hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def new_record(folder: Path, root: Path, version: str) -> Record:
    """A record for this process in `folder` (nothing written yet)."""
    folder = private_folder(folder)
    name = f"{_key(root)}-{os.getpid()}"
    socket = socket_path(folder, f"{name}.sock")
    return Record(
        root=root,
        socket=socket,
        pid=os.getpid(),
        token=secrets.token_urlsafe(32),
        file=folder / f"{name}.json",
        started=time.time(),
        version=version,
    )


def write_record(record: Record) -> None:
    """Atomically publish the record, 0600 from its first byte."""
    temporary = record.file.with_suffix(f".tmp-{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(record.as_json(), handle)
    temporary.replace(record.file)


def remove_record(record: Record) -> None:
    for path in (record.file, record.socket):
        with contextlib.suppress(OSError):
            path.unlink()


def _private_file(path: Path, kind: int) -> bool:
    """Ours, of the expected kind, and unreadable by anyone else."""
    try:
        info = path.lstat()
    except OSError:
        return False
    if info.st_uid != os.getuid() or stat.S_IFMT(info.st_mode) != kind:
        return False
    return stat.S_IMODE(info.st_mode) & 0o077 == 0


def _read(path: Path) -> Record | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Record(
            root=Path(data["root"]),
            socket=Path(data["socket"]),
            pid=int(data["pid"]),
            token=str(data["token"]),
            file=path,
            started=float(data.get("started", 0.0)),
            version=str(data.get("version", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer or outer in inner.parents


def find_records(folder: Path, root: Path) -> list[Record]:
    """Live records whose root contains `root`, the closest root first, then the newest.

    A record of a dead process is removed (with its socket); a record or socket that is not
    this user's private file is never used (and not touched: it is not ours to clean)."""
    try:
        info = folder.lstat()
    except OSError:
        return []
    if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        log.warning("ignoring discovery folder %s: not private to this user", folder)
        return []
    found: list[Record] = []
    for path in folder.glob("*.json"):
        if not _private_file(path, stat.S_IFREG):
            continue
        record = _read(path)
        if record is None:
            continue
        if not pid_alive(record.pid):
            log.info("removing the stale discovery record of pid %d", record.pid)
            forget(record)
            if record.socket.stem.endswith(f"-{record.pid}"):  # its own socket, no other
                with contextlib.suppress(OSError):
                    record.socket.unlink()
            continue
        if not _private_file(record.socket, stat.S_IFSOCK):
            continue
        if _contains(record.root, root):
            found.append(record)
    found.sort(key=lambda r: (-len(r.root.parts), -r.started))
    return found


def forget(record: Record) -> None:
    """A record whose server refused its own token is stale (a reused pid): drop the file."""
    with contextlib.suppress(OSError):
        record.file.unlink()
