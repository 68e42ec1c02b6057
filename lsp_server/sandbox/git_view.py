"""Inside the sandbox, git does not list toolhost's placeholders as untracked files.

While a command runs, each missing protected name (.envrc, .npmrc, .vscode ...) is an empty
placeholder on disk (placeholders.py). `git status` in the command would list a dozen of
them as untracked files, which the model reads as the project's own and may try to add,
read or delete. Where a root is the top of a git repository, the command sees that
repository's `.git/info/exclude` with one more line per placeholder: a copy in the
command's state folder, bound read-only over the original. The user's file is untouched;
git outside the sandbox still lists the placeholders while a command holds them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from lsp_server.sandbox.placeholders import is_placeholder

EXCLUDE_COPY = "git-info-exclude"
MAX_EXCLUDE_BYTES = 1024 * 1024
HEADER = b"# toolhost: sandbox placeholders, empty and gone when the command ends\n"


def gitignore_literal(path: str) -> str:
    """`path` ("/"-separated, relative to the repository) as a gitignore pattern matching
    that name only: anchored, wildcards escaped."""
    escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in path)
    return "/" + ("\\" + escaped if escaped[:1] in ("#", "!") else escaped)


def _read_exclude(root: Path) -> bytes | None:
    """The repository's info/exclude when `root/.git` is a real folder holding it as a
    regular file (never through a link: the copy is shown to the command)."""
    try:
        for folder in (root / ".git", root / ".git" / "info"):
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
        fd = os.open(
            root / ".git" / "info" / "exclude", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        )
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_EXCLUDE_BYTES:
            return None
        return handle.read(MAX_EXCLUDE_BYTES)


def exclude_views(
    roots: Sequence[Path], held: Sequence[Path], state_dir: Path
) -> list[tuple[Path, Path]]:
    """(copy, original) pairs to bind read-only: for each root at the top of a repository
    whose placeholders this command holds, its info/exclude plus a line per placeholder."""
    views: list[tuple[Path, Path]] = []
    for index, root in enumerate(roots):
        lines = []
        for path in held:
            if path.is_relative_to(root) and is_placeholder(path):
                slash = "/" if path.is_dir() else ""
                lines.append(f"{gitignore_literal(path.relative_to(root).as_posix())}{slash}\n")
        if not lines:
            continue
        text = _read_exclude(root)
        if text is None:
            continue
        if text and not text.endswith(b"\n"):
            text += b"\n"
        copy = state_dir / f"{EXCLUDE_COPY}-{index}"
        copy.write_bytes(text + HEADER + "".join(lines).encode(errors="surrogateescape"))
        views.append((copy, root / ".git" / "info" / "exclude"))
    return views
