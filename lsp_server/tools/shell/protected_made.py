"""Protected names a workspace-write sandboxed command made below the top of a root, where
no placeholder could wait for them (`mkdir -p a/b/c && cd a/b/c && python3 -c
"open(<computed .git>...)"`): found and renamed aside before the checkpoint records them.

Where the root's checkpoint watcher runs (checkpoints/watching/watcher.py), the names made
during the command are the ones its inotify events report while the command ran, plus everything
inside a folder it made: the cost follows what the command made, not the size of the tree.
Elsewhere (checkpoints off, no inotify, watches exhausted, events dropped) only one folder
down is compared before and after, as a full scan would cost more than the command.

A name made meanwhile by another command of the same root is renamed too: its window
overlaps (docs/SANDBOX.md). Names that existed before the command are never touched.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import attrs

from lsp_server.checkpoints.watching.changes import NewNames
from lsp_server.checkpoints.watching.root_watchers import RootWatchers, Watcher
from lsp_server.sandbox.protected import ProtectedPaths
from lsp_server.sandbox.protected_scan import may_be_placeholder, scan_roots

BLOCKED_SUFFIX = ".blocked-by-toolhost"


@attrs.frozen
class Watched:
    watcher: Watcher
    names: NewNames


@attrs.frozen
class ProtectedBefore:
    """What a command's end compares with: the protected paths one folder down before it,
    and the watcher windows of the roots that have one."""

    present: frozenset[Path]
    windows: dict[Path, Watched]


def open_windows(roots: tuple[Path, ...], watchers: RootWatchers | None) -> dict[Path, Watched]:
    found = {}
    for root in roots:
        watcher = watchers.running(root) if watchers is not None else None
        names = watcher.open_window() if watcher is not None else None
        if watcher is not None and names is not None:
            found[root] = Watched(watcher, names)
    return found


def made_protected(
    roots: tuple[Path, ...], protected: ProtectedPaths, before: ProtectedBefore
) -> list[Path]:
    """Protected paths the command made (outermost, sorted): from the watcher where it saw
    the whole window, one folder down everywhere (placeholders at the top excluded)."""
    made: set[Path] = set()
    for opened in before.windows.values():
        opened.watcher.close_window(opened.names)  # all closed before any is looked into
    for root in roots:
        watched = before.windows.get(root)
        if watched is not None and watched.names.lost is None:
            unreadable: set[str] = set()
            found = _from_window(root, protected, watched.names, unreadable)
            made.update(root / rel for rel in found)
            # Looked at again by the next command's window (a chmod may hide them now).
            watched.watcher.carry(unreadable)
    for path in scan_roots(roots, protected).present:
        if path not in before.present:
            made.add(path)
    return sorted(p for p in made if os.path.lexists(p))


def _from_window(
    root: Path, protected: ProtectedPaths, names: NewNames, unreadable: set[str]
) -> set[str]:
    found: set[str] = set()
    for rel in sorted(names.created):
        for path in _with_inside(root, protected, rel, unreadable):
            hit = _outermost_protected(protected, path.split("/"))
            # Only a name made in the window: a protected folder that existed (deeper than
            # the sandbox holds) with a new file inside is left as it is.
            if hit is not None and len(hit) >= len(rel.split("/")):
                name = "/".join(hit)
                if protected.held_at_top(hit) or may_be_placeholder(name, protected):
                    continue
                try:
                    os.lstat(root / name)
                except PermissionError:  # in a folder made unsearchable
                    unreadable.add(name)
                    continue
                except OSError:
                    continue  # gone again
                found.add(name)
    return found


def _with_inside(
    root: Path, protected: ProtectedPaths, rel: str, unreadable: set[str]
) -> Iterator[str]:
    """`rel` and, when it is a folder (not a link), every path inside it: all of them are
    new, and the watcher saw none of what was made there before it watched the folder. A
    protected folder is not entered (it is renamed as a whole). What cannot be looked at
    (a folder made unreadable) goes to `unreadable`."""
    yield rel
    top = root / rel
    try:
        folder_made = not top.is_symlink() and top.is_dir()
    except OSError:
        unreadable.add(rel)
        return
    if _outermost_protected(protected, rel.split("/")) is not None or not folder_made:
        return

    def skipped(error: OSError) -> None:
        if error.filename is not None:
            unreadable.add(Path(error.filename).relative_to(root).as_posix())

    for folder, dirs, files in os.walk(top, onerror=skipped, followlinks=False):
        base = Path(folder).relative_to(root).as_posix()
        keep = []
        for name in sorted(dirs):
            inner = f"{base}/{name}"
            yield inner
            if protected.match((*base.split("/"), name)) is None:
                keep.append(name)
        dirs[:] = keep
        for name in files:
            yield f"{base}/{name}"


def _outermost_protected(protected: ProtectedPaths, parts: list[str]) -> tuple[str, ...] | None:
    if protected.match(parts) is None:
        return None
    for n in range(1, len(parts) + 1):
        if protected.match(parts[:n]) is not None:
            return tuple(parts[:n])
    return None


def aside(path: Path) -> Path:
    """A free name next to `path` that nothing runs."""
    candidate = path.with_name(path.name + BLOCKED_SUFFIX)
    count = 1
    while os.path.lexists(candidate):
        count += 1
        candidate = path.with_name(f"{path.name}{BLOCKED_SUFFIX}-{count}")
    return candidate
