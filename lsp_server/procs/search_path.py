"""The PATH a process toolhost starts for itself searches: without what would run the
project's own code in its place (a language server found on it, the checkpoints' helper
tools), since the workspace is the agent's to write."""

from __future__ import annotations

import os
from pathlib import Path


def outside_path(root: Path, search_path: str | None) -> str:
    """PATH without what would run the project's own code: relative entries (the current
    folder) and folders inside the root."""
    entries = (search_path if search_path is not None else os.environ.get("PATH", "")).split(
        os.pathsep
    )
    kept = [
        entry
        for entry in entries
        if entry and Path(entry).is_absolute() and not _inside(Path(entry), root)
    ]
    return os.pathsep.join(kept)


def _inside(folder: Path, root: Path) -> bool:
    real = Path(os.path.realpath(folder))
    return real == root or root in real.parents
