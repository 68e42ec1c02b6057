"""Files with more than one name (hard links): read only when every name is accounted for.

A hard link inside the workspace can name a file from anywhere on the same file system
(`~/.ssh/id_ed25519`, another user's readable file) or give `.env` an innocent name. Its
real path says nothing about that. The rule: a regular file with n > 1 links is read only
when a bounded scan of its root finds all n names there, and none of them is a secret;
otherwise it is refused. Writers never write through a link: they replace the name
atomically (fs/diskwrite.py), so the other names keep the old bytes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_server.core.errors import OUTSIDE_SCOPE, SECRET_FILE, ToolError

if TYPE_CHECKING:
    from lsp_server.fs.workspace import Workspace

SCAN_LIMIT = 50_000  # folder entries looked at before giving up (and refusing)


def names_of(root: Path, st: os.stat_result, limit: int = SCAN_LIMIT) -> list[Path] | None:
    """Every name of the file `st` under `root`, or None when the scan hit its limit first.
    Symlinks are not followed; the scan stops as soon as all st_nlink names are found."""
    found = names_of_many(root, [st], limit)
    return None if found is None else found[(st.st_dev, st.st_ino)]


def require_all_inside(workspace: Workspace, root: Path, path: Path, st: os.stat_result) -> None:
    refusal = link_refusal(workspace, path, st, names_of(root, st))
    if refusal is not None:
        raise refusal


def link_refusal(
    workspace: Workspace, path: Path, st: os.stat_result, names: list[Path] | None
) -> ToolError | None:
    """Why a file with `names` found for it (None: the scan hit its limit) may not be
    shown: not all of its st_nlink names are inside, or one of them is a secret."""
    rel = workspace.relative(path)
    if names is None or len(names) < st.st_nlink:
        why = (
            f"the workspace is too large to find its {st.st_nlink} names"
            if names is None
            else f"only {len(names)} of its {st.st_nlink} names are inside the workspace"
        )
        return ToolError(
            OUTSIDE_SCOPE,
            f"{rel} is a hard link ({why}): it may be a file from outside the workspace",
            "files linked from outside are not read; copy the content into a new file "
            "(cp, not ln) if the user wants it read",
        )
    for name in names:
        if workspace.is_secret(name):
            return ToolError(
                SECRET_FILE,
                f"{rel} is another name (hard link) of {workspace.relative(name)}, "
                "which looks like a secret",
                "it is not shown to tools; a user can allow it with workspace.allowed_secrets",
            )
    return None


def names_of_many(
    root: Path, files: Sequence[os.stat_result], limit: int = SCAN_LIMIT
) -> dict[tuple[int, int], list[Path]] | None:
    """`names_of` for several files in one scan of `root`: (device, inode) -> the names
    found; None when the scan hit its limit before it found them all."""
    wanted = {(st.st_dev, st.st_ino): st.st_nlink for st in files}
    inodes = {inode for _, inode in wanted}
    found: dict[tuple[int, int], list[Path]] = {key: [] for key in wanted}
    missing = sum(wanted.values())
    seen = 0
    pending = [root]
    while pending and missing > 0:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > limit:
                return None
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
            elif entry.inode() in inodes:
                try:
                    other = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                key = (other.st_dev, other.st_ino)
                if key in found:
                    found[key].append(Path(entry.path))
                    missing -= 1
                    if missing == 0:
                        return found
    return found
