"""Ignored files in shell checkpoints, within a budget (docs/CHECKPOINTS.md).

People keep local configs, databases and notes in files their .gitignore names, so a
snapshot records them too: every ignored file outside the regenerable folders
(`checkpoints.skip_folders`: node_modules, .venv, target, build ...; .git always),
smallest first, while their total stays within `checkpoints.ignored_budget_mb` and each is within
`max_file_bytes`. Once in the shadow index, `git add -A` follows them like any other file.

What is left out is remembered by its stat (`unrecorded.json`), so that when a command
deletes, changes or creates such a file its result can say it cannot be reverted.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from lsp_server.checkpoints.shadow.isolated_git import ShadowError
from lsp_server.checkpoints.shadow.repository import ShadowRepo

Stat = tuple[int, int, int]  # size, mtime_ns, inode


@attrs.frozen
class Unrecorded:
    """A change to an ignored file that no checkpoint holds."""

    path: str
    change: str  # created | modified | deleted
    size: int
    why: str  # "over the budget" | "over the size limit"

    def describe(self) -> str:
        what = {
            "created": "was created and is not recorded",
            "modified": "was changed and cannot be reverted",
            "deleted": "was deleted and cannot be reverted",
        }
        return f"{self.path} (ignored, {human_size(self.size)}, {self.why}) {what[self.change]}"


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


def _skipped(relative: str, skip: frozenset[str]) -> bool:
    return any(part in skip for part in relative.rstrip("/").split("/"))


def _kept_out(relative: str, kept_out: Sequence[str]) -> bool:
    """At or below one of toolhost's own folders (ShadowRepo.kept_out)."""
    relative = relative.rstrip("/")
    return any(relative == k or relative.startswith(k + "/") for k in kept_out)


def _walk(
    root: Path, folder: str, skip: frozenset[str], kept_out: Sequence[str] = ()
) -> Iterable[str]:
    """Files below an ignored folder, regenerable folders, nested repositories and
    toolhost's own folders left out."""
    for current, dirs, files in os.walk(root / folder):
        base = Path(current).relative_to(root).as_posix()
        dirs[:] = [
            d
            for d in dirs
            if d not in skip
            and not (Path(current, d, ".git")).exists()
            and not _kept_out(f"{base}/{d}", kept_out)
        ]
        for name in files:
            yield f"{base}/{name}"


def ignored_candidates(
    repo: ShadowRepo, skip: frozenset[str], paths: Sequence[str] | None = None
) -> list[str]:
    """Ignored files that are not in the shadow index yet (regenerable folders left out);
    only those at or below `paths` when given (names just made: one an ignore rule matches
    is taken as new without a look at the index, `ignored_among`)."""
    command = ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"]
    if paths is None:
        return _listed(repo, skip, repo.git.run(*command))
    present = [p for p in paths if os.path.lexists(repo.work_tree / p)]
    matched = ignored_among(repo, present)
    if matched is None:  # (git could not tell: ls-files decides, as it did for all of them)
        entries, folders = [], present
    else:
        folder = {p for p in present if _is_folder(repo, p)}
        entries = [f"{p}/" if p in folder else p for p in present if p in matched]
        folders = [p for p in present if p not in matched and p in folder]
    found = _listed(repo, skip, "\0".join(entries).encode("utf-8", "surrogateescape"))
    if folders:  # (none in an ignored folder: ls-files fails on those)
        found += _listed(repo, skip, repo.git.run("--literal-pathspecs", *command, "--", *folders))
    return list(dict.fromkeys(found))


def ignored_among(repo: ShadowRepo, paths: list[str]) -> set[str] | None:
    """Those of `paths` an ignore rule matches, themselves or a folder above them (`git
    check-ignore`, which reads no index: ls-files reads all of it, 0.1 s at 200,000 files,
    and fails on a name two folders deep in an ignored one); None when git cannot tell (a
    path in a nested repository or below a link)."""
    if not paths:
        return set()
    # check-ignore takes no --literal-pathspecs: a name that starts with ":" would be read
    # as pathspec magic, "./" before it is not (and git answers with the name as given).
    asked = [f"./{p}" if p.startswith(":") else p for p in paths]
    names = "".join(f"{p}\0" for p in asked).encode("utf-8", "surrogateescape")
    try:
        raw = repo.git.run("check-ignore", "--no-index", "-z", "--stdin", data=names, ok=(0, 1))
    except ShadowError:
        return None
    answered = raw.decode("utf-8", "surrogateescape").split("\0")
    return {p[2:] if p.startswith("./:") else p for p in answered if p}


def ignored_files_among(repo: ShadowRepo, skip: frozenset[str], files: Iterable[str]) -> list[str]:
    """The candidates among ignored `files` (regenerable folders and toolhost's own out)."""
    return [f for f in files if not _skipped(f, skip) and not _kept_out(f, repo.kept_out)]


def _is_folder(repo: ShadowRepo, path: str) -> bool:
    full = repo.work_tree / path
    return full.is_dir() and not full.is_symlink()


def _listed(repo: ShadowRepo, skip: frozenset[str], raw: bytes) -> list[str]:
    """The ignored files named by `raw` (NUL-separated; a folder, ending in "/": the files
    below it, as `_walk` finds them), regenerable folders and toolhost's own left out."""
    found: list[str] = []
    for entry in dict.fromkeys(raw.decode("utf-8", "surrogateescape").split("\0")):
        if not entry or _skipped(entry, skip) or _kept_out(entry, repo.kept_out):
            continue
        if entry.endswith("/"):
            if (repo.work_tree / entry / ".git").exists():
                continue  # a nested repository
            found.extend(_walk(repo.work_tree, entry.rstrip("/"), skip, repo.kept_out))
        else:
            found.append(entry)
    return found


def _stat(path: Path) -> Stat | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


class IgnoredFiles:
    """The ignored files of one shadow repository: recorded ones and left-out ones."""

    def __init__(self, repo: ShadowRepo, budget_bytes: int, skip: Sequence[str]) -> None:
        self.repo = repo
        self.budget = budget_bytes
        self.skip = frozenset((*skip, ".git"))
        self._recorded_file = repo.folder / "ignored.json"
        self._left_out_file = repo.folder / "unrecorded.json"
        self._left_out: dict[str, list[int | str]] | None = None

    def left_out(self) -> dict[str, list[int | str]]:
        """path -> [size, mtime_ns, inode, why] of ignored files no snapshot holds."""
        if self._left_out is None:
            self._left_out = _load(self._left_out_file)
        return self._left_out

    def forget(self) -> None:
        """The index was dropped: the next `record` starts afresh."""
        self._recorded_file.unlink(missing_ok=True)
        self._left_out_file.unlink(missing_ok=True)
        self._left_out = None

    def candidates(self) -> list[str]:
        """Every ignored file not in the shadow index (regenerable folders left out): what
        `record` looks at without `created`, found beforehand (beside a `git add -A`)."""
        return ignored_candidates(self.repo, self.skip)

    def record(self, created: Iterable[str] | None = None, found: list[str] | None = None) -> None:
        """Add new ignored files to the shadow index, within the budget (before or after
        add -A). With `created` (the names made since the last record, watching/watcher.py), only
        those and the files left out last time are candidates: any other ignored file that
        is not in the index was left out last time, so the outcome is the full scan's.
        `found`: the candidates of a full scan (`candidates`), looked for already."""
        known = _load_any(self._recorded_file)
        recorded: dict[str, int] = {
            path: size
            for path, size in known.items()
            if isinstance(size, int) and (self.repo.work_tree / path).exists()
        }
        left_before = self.left_out()
        used = sum(recorded.values())
        left_out: dict[str, list[int | str]] = {}
        stats = []
        if found is not None:
            candidates = found
        elif created is None:
            candidates = ignored_candidates(self.repo, self.skip)
        else:
            paths = sorted(set(created))
            candidates = [*ignored_candidates(self.repo, self.skip, paths), *left_before]
        for path in dict.fromkeys(candidates):
            st = _stat(self.repo.work_tree / path)
            if st is not None:
                stats.append((st[0], path, st))
        adding = []
        for size, path, st in sorted(stats):
            if size > self.repo.max_file_bytes:
                left_out[path] = [*st, "over the size limit"]
            elif used + size > self.budget:
                left_out[path] = [*st, "over the budget"]
            else:
                adding.append(path)
                recorded[path] = size
                used += size
        if adding:
            names = "".join(f"{path}\0" for path in adding).encode("utf-8", "surrogateescape")
            self.repo.git.run(
                "add", "-f", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul",
                data=names, ok=(0, 1),
            )  # fmt: skip
        if recorded != known:
            _save(self._recorded_file, recorded)
        if left_out != left_before or not self._left_out_file.exists():
            _save(self._left_out_file, left_out)
        self._left_out = left_out


def unrecorded_changes(
    root: Path, before: dict[str, list[int | str]], after: dict[str, list[int | str]]
) -> list[Unrecorded]:
    """What a command did to ignored files that no checkpoint holds: `before` and `after`
    are the left-out files around it (IgnoredFiles.left_out)."""
    changes = []
    for path, (size, mtime, ino, why) in before.items():
        now = _stat(root / path)
        if now is None:
            changes.append(Unrecorded(path, "deleted", int(size), str(why)))
        elif now != (size, mtime, ino):
            changes.append(Unrecorded(path, "modified", now[0], str(why)))
    for path, (size, _, _, why) in after.items():
        if path not in before:
            changes.append(Unrecorded(path, "created", int(size), str(why)))
    return sorted(changes, key=lambda c: c.path)


def _load_any(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _load(path: Path) -> dict[str, list[int | str]]:
    return {
        key: value
        for key, value in _load_any(path).items()
        if isinstance(value, list) and len(value) == 4
    }


def _save(path: Path, data: object) -> None:
    path.write_text(json.dumps(data))
