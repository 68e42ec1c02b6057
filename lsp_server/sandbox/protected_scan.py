"""Which protected names of each root the sandbox binds read-only (protected.py).

Held (placeholders.py: locked, and created when missing): every plain name of the list at
the top of each root, and `pip.conf` in each virtual environment there (a folder with
`pyvenv.cfg`: pip reads `$VIRTUAL_ENV/pip.conf`). Bound as they are when they exist:
whatever else the list matches at the top of a root or one folder down (`sub/.git`,
`tools/.envrc`, a configured glob). Deeper, and missing ones below the top, are left to
the policy (they are not held): scanning a whole tree for every command would cost more
than the command.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import attrs

from lsp_server.fs.workspace import NEVER_WALKED
from lsp_server.sandbox.placeholders import Target
from lsp_server.sandbox.protected import ProtectedPaths

MAX_FOLDERS = 256
"""Top-level folders looked into per root (in name order); the rest are not."""
_VENV_MARKER = "pyvenv.cfg"


@attrs.frozen
class ProtectedBinds:
    held: tuple[Target, ...] = ()
    """To hold (and create when missing), then bind read-only."""
    present: tuple[Path, ...] = ()
    """Existing protected paths to bind read-only as they are (`--ro-bind-try`)."""
    pinned: tuple[Path, ...] = ()
    """Folders at the top that hold a protected path (`sub` of `sub/.git`), bound onto
    themselves, still writable: a mount point cannot be renamed, so `mv sub sub2 && mkdir
    sub` cannot put an unprotected `sub/.git` or `sub/.envrc` in its place."""


def _listing(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))  # noqa: PTH208 (names, not Path objects)
    except OSError:
        return []


def _is_folder(path: Path) -> bool:
    return not path.is_symlink() and path.is_dir()


def scan_root(root: Path, protected: ProtectedPaths) -> ProtectedBinds:
    top = protected.top_level()
    held = [Target(root, name, kind) for name, kind in top.items()]
    present: list[Path] = []
    pinned: list[Path] = []
    folders = 0
    for name in _listing(root):
        if name in top:
            continue
        path = root / name
        if protected.match((name,)) is not None:
            present.append(path)
            continue
        if folders >= MAX_FOLDERS or str(path) in NEVER_WALKED or not _is_folder(path):
            continue
        folders += 1
        inner = _listing(path)
        venv = _VENV_MARKER in inner
        if venv:
            held.append(Target(path, "pip.conf", "file"))
        found = [
            path / child
            for child in inner
            if not (child == "pip.conf" and venv) and protected.match((name, child)) is not None
        ]
        if found:  # not a venv for pip.conf alone: `rm -rf .venv && uv venv` must work
            pinned.append(path)
        present += found
    return ProtectedBinds(tuple(held), tuple(present), tuple(pinned))


def scan_roots(roots: Sequence[Path], protected: ProtectedPaths) -> ProtectedBinds:
    """What to bind read-only over each of `roots` (real paths)."""
    held: list[Target] = []
    present: list[Path] = []
    pinned: list[Path] = []
    for root in roots:
        found = scan_root(root, protected)
        held += found.held
        present += found.present
        pinned += found.pinned
    return ProtectedBinds(tuple(held), tuple(present), tuple(pinned))


def may_be_placeholder(relative: str, protected: ProtectedPaths | None = None) -> bool:
    """Whether an empty file at `relative` (posix, from a root) may be a placeholder the
    sandbox made for a command (placeholders.py): a name held at the top, or pip.conf in a
    folder there. Checkpoints leave such files out: another command running meanwhile made
    or removed them, and a revert that removed one would lift that command's read-only
    mount."""
    parts = relative.split("/")
    if len(parts) == 2:
        return parts[1] == "pip.conf"
    return len(parts) == 1 and parts[0] in (protected or ProtectedPaths()).top_level()


def sandbox_holds(root: Path, parts: Sequence[str], protected: ProtectedPaths) -> bool:
    """Whether the sandbox keeps `root/parts` read-only whether or not it exists: it is (or
    lies in) a name held at the top of the root, an existing protected path bound as it
    is (top or one folder down), or a virtual environment's pip.conf."""
    if protected.held_at_top(parts):
        return True
    if not parts or protected.match(parts) is None:
        return False
    if len(parts) > 1 and parts[1] == "pip.conf" and (root / parts[0] / _VENV_MARKER).exists():
        return True
    for depth in (1, 2):
        head = parts[:depth]
        if len(head) == depth and protected.match(head) is not None:
            return os.path.lexists(root.joinpath(*head))
    return False
