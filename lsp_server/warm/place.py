"""Where the warm process for this code listens: named by the code's stamp. The standard
library only (the front computes it before anything else is imported)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import NamedTuple

from lsp_server.home.dirs import Dirs
from lsp_server.home.private_folder import MAX_SOCKET_PATH, private_folder, socket_path

PACKAGE = Path(__file__).resolve().parents[1]


def code_stamp() -> str:
    """The interpreter, its import path (but the script's own folder, first), what set the
    interpreter up at start (PYTHON* and locale variables: the encodings, hash seed and
    warnings of the warm process are those of the start that made it), and the path, size
    and mtime of every file of this package (~300 stats, ~2 ms): an edited or upgraded
    toolhost gets another warm process."""
    digest = hashlib.sha256()
    for part in (sys.executable, sys.version, *sys.path[1:]):
        digest.update(os.fsencode(part) + b"\0")
    for name, value in sorted(os.environ.items()):
        if name.startswith(("PYTHON", "LC_")) or name == "LANG":
            digest.update(os.fsencode(f"{name}={value}\0"))
    for folder, subfolders, files in os.walk(PACKAGE):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        for name in sorted(files):
            path = Path(folder, name)
            try:
                info = path.stat()
            except OSError:
                continue
            digest.update(os.fsencode(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0"))
    return digest.hexdigest()[:16]


class Place(NamedTuple):
    socket: Path
    lock: Path
    """Held by the warm process for its whole life (one per stamp); it holds its pid."""
    log: Path
    """Its stderr (it has no terminal)."""


def place(stamp: str, folder: Path | None = None) -> Place:
    """In the user's private runtime folder (the attach folder, made if needed). A socket
    path too long for an address goes to /tmp/toolhost-<uid>, named for this folder too,
    so that two runtime folders never share a warm process."""
    folder = private_folder(folder or Dirs.from_environment().attach_folder)
    socket = folder / f"warm-{stamp}.sock"
    if len(os.fsencode(socket)) > MAX_SOCKET_PATH:
        here = hashlib.sha256(os.fsencode(f"{folder}\0{stamp}")).hexdigest()[:16]
        socket = socket_path(folder, f"warm-{here}.sock")
    return Place(socket, folder / f"warm-{stamp}.lock", folder / f"warm-{stamp}.log")
