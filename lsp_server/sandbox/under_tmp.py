"""What must stay visible over the sandbox's private /tmp: the home folder, the PATH
entries and the server's own interpreter when they live under /tmp (a checkout, a venv or
a toolchain unpacked there), bound read-only. Without them a command finds no `python`
or `node` that the user can run outside (exit 127), and the in-sandbox forwarder cannot
start. /tmp itself is never bound: that would undo the private /tmp.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

TMP = Path("/tmp")
PACKAGE = Path(__file__).resolve().parents[1]
"""lsp_server/: the forwarder runs from it inside the sandbox."""


def _below_tmp(path: Path) -> bool:
    return path != TMP and path.is_relative_to(TMP)


def interpreter_folders(executable: str | None = None) -> list[Path]:
    """The server's interpreter: its venv (sys.prefix), the base installation, the folder
    of the executable and of its real file."""
    exe = Path(executable or sys.executable)
    found = [exe.parent, Path(os.path.realpath(exe)).parent]
    if executable is None:
        found += [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)]
    return found


def folders_under_tmp(
    path_env: str | None = None,
    home: str | None = None,
    interpreter: Iterable[Path] | None = None,
) -> tuple[Path, ...]:
    """The folders to bind read-only over the private /tmp, outermost first, none inside
    another. Defaults: this process's PATH, HOME and interpreter, and the package."""
    path_env = os.environ.get("PATH", "") if path_env is None else path_env
    home = os.environ.get("HOME", "") if home is None else home
    candidates = [Path(entry) for entry in path_env.split(os.pathsep) if entry]
    if home:
        candidates.append(Path(home))
    candidates += list(interpreter_folders() if interpreter is None else interpreter)
    candidates.append(PACKAGE)
    kept: list[Path] = []
    for candidate in candidates:
        if not candidate.is_absolute():
            continue
        for path in (Path(os.path.normpath(candidate)), Path(os.path.realpath(candidate))):
            if _below_tmp(path) and path not in kept:
                kept.append(path)
    kept.sort(key=lambda p: len(p.parts))
    outermost: list[Path] = []
    for path in kept:
        if not any(path.is_relative_to(parent) for parent in outermost):
            outermost.append(path)
    return tuple(outermost)
