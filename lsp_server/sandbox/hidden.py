"""The user's credential files and folders outside the workspace, hidden from sandboxed
commands: an empty read-only file over each file, an empty read-only tmpfs over each
folder (bubblewrap.py mounts them). Redaction replaces a secret value a command prints,
but not `base64 ~/.ssh/id_ed25519` or a hex dump of `~/.netrc`; a sandboxed command runs
unasked and has no use for these files (no network of its own, and ssh never reaches
through the HTTP(S) proxy), so it does not see them at all.

The list is the one the secret values come from (secrets/user_files.py) plus the user's
`shell.sandbox_hide`. Only what exists is hidden (bwrap needs a mount point), never a
path inside a workspace root (the project's own `.env` stays readable: its dev servers and
tests read it, and what a command prints of it is redacted), and a symlink is resolved so
that its real file is the one hidden. The answer is kept while the folders that hold the
listed names keep their mtimes (a stat each), so a command pays a few stats, not a walk.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from lsp_server.secrets.user_files import USER_CREDENTIAL_FILES, USER_CREDENTIAL_FOLDERS


@attrs.frozen
class HiddenPath:
    path: Path
    """The real path (symlinks resolved) the empty file or folder is mounted over."""
    folder: bool


def listed_paths(home: str | None, extra: Iterable[str]) -> list[Path]:
    """The built-in names below `home` and the `shell.sandbox_hide` entries (absolute, or
    `~/...`; a relative one is below the home folder)."""
    paths: list[Path] = []
    base = Path(home) if home and home.startswith("/") else None
    if base is not None:
        paths += [base / name for name in (*USER_CREDENTIAL_FOLDERS, *USER_CREDENTIAL_FILES)]
    for entry in extra:
        if entry.startswith("~/") and base is not None:
            paths.append(base / entry[2:])
        elif entry.startswith("/"):
            paths.append(Path(entry))
        elif entry and base is not None:
            paths.append(base / entry)
    return [Path(os.path.normpath(p)) for p in paths]


def find_hidden(listed: Sequence[Path], roots: Sequence[Path]) -> tuple[HiddenPath, ...]:
    """What to hide now: each listed path that exists and is not inside a root, by its real
    path, outermost first; nothing inside a folder that is hidden already."""
    found: dict[Path, bool] = {}
    for path in listed:
        if _inside(path, roots):
            continue
        real = Path(os.path.realpath(path))
        try:
            is_dir = real.is_dir()
            present = is_dir or real.is_file()
        except OSError:
            continue
        if present and real != Path("/") and not _inside(real, roots):
            found[real] = is_dir
    kept: list[HiddenPath] = []
    for real in sorted(found, key=lambda p: len(p.parts)):
        if not any(h.folder and real.is_relative_to(h.path) for h in kept):
            kept.append(HiddenPath(real, found[real]))
    return tuple(kept)


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(
        path == root or path.is_relative_to(root) or root.is_relative_to(path) for root in roots
    )


class HiddenCredentials:
    """One per server: `find` answers from the last answer while the folders that hold the
    listed names and the hidden real paths keep their mtimes (a new `~/.aws/credentials`
    changes `~/.aws`'s; a symlink's target replaced changes its folder's)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: _Answer | None = None
        self._listed: tuple[tuple[str | None, tuple[str, ...]], list[Path]] | None = None

    def find(
        self, roots: Sequence[Path], extra: Iterable[str] = (), home: str | None = None
    ) -> tuple[HiddenPath, ...]:
        wanted = (os.environ.get("HOME") if home is None else home, tuple(extra))
        with self._lock:
            last, known = self._last, self._listed
        if known is None or known[0] != wanted:  # building the paths costs more than stats
            known = (wanted, listed_paths(*wanted))
        listed = known[1]
        key = (tuple(roots), wanted)
        if last is not None and last.key == key and _stamps(last.watched) == last.stamps:
            return last.hidden
        hidden = find_hidden(listed, roots)
        parents = [*(p.parent for p in listed), *(h.path.parent for h in hidden)]
        watched = tuple(dict.fromkeys(str(p) for p in parents))
        answer = _Answer(key, hidden, watched, _stamps(watched))
        with self._lock:
            self._last, self._listed = answer, known
        return hidden


@attrs.frozen
class _Answer:
    key: tuple[object, ...]
    hidden: tuple[HiddenPath, ...]
    watched: tuple[str, ...]
    stamps: tuple[int, ...]


def _stamps(folders: Sequence[str]) -> tuple[int, ...]:
    stamps: list[int] = []
    for folder in folders:
        try:
            st = os.stat(folder)  # noqa: PTH116 - a str per folder: half the cost of Path
        except OSError:
            stamps += [0, 0]
            continue
        stamps += [st.st_mtime_ns, st.st_ino]
    return tuple(stamps)
