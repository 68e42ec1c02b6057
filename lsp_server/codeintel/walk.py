"""The files of a workspace the index covers: known languages, .gitignore honoured,
large files skipped. A stat per file and nothing more: this walk is the stat sweep."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from stat import S_ISREG

import attrs
import pathspec

from lsp_server.codeintel.languages import all_extensions

MAX_FILE_BYTES = 1024 * 1024
"""Larger files are generated or data more often than code; they are not indexed."""

# Version-control internals are never code; node_modules is skipped even without a
# .gitignore because one stray install would dwarf the project.
ALWAYS_SKIPPED = frozenset({".git", ".hg", ".svn", "node_modules"})


@attrs.frozen
class FileStat:
    path: str
    """Relative to the root, with `/` separators."""
    size: int
    mtime_ns: int


def _load_ignore(directory: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines.splitlines())


def _ignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str, is_dir: bool) -> bool:
    candidate = rel + "/" if is_dir else rel
    for base, spec in specs:
        local = candidate[len(base) :] if base else candidate
        if spec.match_file(local):
            return True
    return False


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def walk(root: Path, excludes: Sequence[str] = ()) -> Iterator[FileStat]:
    """Every indexable file under root. `excludes` are extra gitignore-style patterns."""
    extensions = frozenset(all_extensions())
    extra = pathspec.GitIgnoreSpec.from_lines(list(excludes)) if excludes else None
    stack: list[tuple[Path, str, list[tuple[str, pathspec.GitIgnoreSpec]]]] = []
    root_specs = [("", extra)] if extra is not None else []
    stack.append((root, "", root_specs))
    while stack:
        directory, prefix, specs = stack.pop()
        own = _load_ignore(directory)
        if own is not None:
            specs = [*specs, (prefix, own)]
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name in ALWAYS_SKIPPED or _ignored(specs, rel, True):
                        continue
                    stack.append((Path(entry.path), rel + "/", specs))
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                if _suffix(entry.name) not in extensions:
                    continue
                if specs and _ignored(specs, rel, False):
                    continue
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.st_size <= MAX_FILE_BYTES:
                yield FileStat(rel, stat.st_size, stat.st_mtime_ns)


def is_indexable(root: Path, rel: str, excludes: Sequence[str] = ()) -> bool:
    """Whether `walk` would list this path (extension, skipped folders, .gitignore files)."""
    parts = rel.split("/")
    if _suffix(parts[-1]) not in all_extensions() or ALWAYS_SKIPPED.intersection(parts[:-1]):
        return False
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    if excludes:
        specs.append(("", pathspec.GitIgnoreSpec.from_lines(list(excludes))))
    prefix = ""
    for depth, part in enumerate(parts):
        own = _load_ignore(root / prefix) if prefix or depth == 0 else None
        if own is not None:
            specs.append((prefix, own))
        is_dir = depth < len(parts) - 1
        if _ignored(specs, prefix + part, is_dir):
            return False
        prefix += part + "/"
    return True


def stat_file(root: Path, rel: str) -> FileStat | None:
    """One file's stat, or None when it is gone, too large or not a regular file."""
    try:
        stat = (root / rel).stat()
    except OSError:
        return None
    if not S_ISREG(stat.st_mode) or stat.st_size > MAX_FILE_BYTES:
        return None
    return FileStat(rel, stat.st_size, stat.st_mtime_ns)
