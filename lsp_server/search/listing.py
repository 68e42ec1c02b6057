"""glob and ls over the ignore-aware walker (pure functions; the tools add paths and
limits). Glob patterns are wcmatch globs: `**` crosses folders, `{a,b}` expands, `*`
and `**` skip names that start with "." unless the pattern spells the dot."""

from __future__ import annotations

import heapq
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import attrs
from wcmatch import glob

from lsp_server.search import rg_files
from lsp_server.search.ignore import NOISE_DIRS, IgnoreLayer, Walker, relative_to
from lsp_server.search.pattern_set import PathTest
from lsp_server.search.render import printable_path

GLOB_FLAGS = rg_files.GLOB_FLAGS
_MAGIC = frozenset("*?[]{}!")


@attrs.define
class GlobResult:
    base: Path
    relative: list[str]
    """The `limit` newest modified first, ties in path order; relative to `base`,
    "/"-separated (the tool shows them so: no Path is made for them)."""
    timed_out: bool = False
    unreadable: list[tuple[str, str]] = attrs.Factory(list)
    """(folder relative to the base, why) for each folder the walk could not open."""
    total: int | None = None
    """How many files match (None: len(relative))."""
    start: Path | None = None
    matched: list[str] = attrs.Factory(list)
    mtimes: list[int] = attrs.Factory(list)
    """ripgrep's listing: the folder it listed, every match in it and its mtime (what a
    later glob of the same pattern may pass as `known`)."""

    @property
    def paths(self) -> list[Path]:
        return [self.base / rel for rel in self.relative]

    @property
    def count(self) -> int:
        return len(self.relative) if self.total is None else self.total


def literal_prefix(pattern: str) -> tuple[str, str]:
    """Split `src/app/**/*.py` into ("src/app", "**/*.py") so the walk starts lower."""
    parts = pattern.split("/")
    literal: list[str] = []
    while len(parts) > 1 and parts[0] and not (_MAGIC & set(parts[0])):
        literal.append(parts.pop(0))
    return "/".join(literal), "/".join(parts)


def _names_in(pattern: str) -> set[str]:
    return {part for part in pattern.replace("{", "/").replace("}", "/").split("/") if part}


def glob_files(
    base: Path,
    pattern: str,
    *,
    ignore_base: Path,
    excluded: Iterable[str],
    timeout_seconds: float,
    rg: Path | None = None,
    limit: int | None = None,
    keep: Callable[[Path], bool] | None = None,
    deny: PathTest | None = None,
    known: rg_files.Known | None = None,
) -> GlobResult:
    """Files under `base` matching `pattern`, newest first: the `limit` first of them
    (all without a limit) and how many match. With `rg`, ripgrep lists (rg_files.py),
    else the Python walker; both give the same answer. `keep` drops a match before it
    is counted (a secret the deny list does not cover); `deny` is `excluded` compiled
    (the engines keep it), for ripgrep, which also takes the mtimes `known` from an earlier
    listing of the same pattern instead of a stat of each match."""
    while pattern.startswith("./"):
        pattern = pattern[2:]
    prefix, rest = literal_prefix(pattern)
    start = base / prefix if prefix else base
    if not start.is_dir():
        return GlobResult(base, [], total=0)
    mentioned = _names_in(pattern)
    # Dot folders are entered only when the pattern names a dot-name.
    hidden = any(name.startswith(".") for name in mentioned) or "/." in "/" + pattern
    skip_dirs = NOISE_DIRS - mentioned
    if rg is not None and start.is_relative_to(ignore_base):
        start_prefix = str(start).rstrip("/") + "/"
        listed = rg_files.list_matching(
            rg, ignore_base, start, rest, hidden=hidden, skip_dirs=skip_dirs,
            excluded=deny or _deny_test(tuple(excluded)), timeout_seconds=timeout_seconds,
            limit=sys.maxsize if limit is None else limit,
            keep=None if keep is None else (lambda rel: keep(Path(start_prefix + rel))),
            known=known,
        )  # fmt: skip
        inside = _inside(base, start)
        return GlobResult(
            base,
            [inside + rel for rel in listed.paths] if inside else listed.paths,
            listed.timed_out,
            [(inside + path, why) for path, why in listed.unreadable],
            listed.total,
            start,
            listed.matched,
            listed.mtimes,
        )
    walker = Walker(ignore_base, hidden=hidden, excluded=tuple(excluded), skip_dirs=skip_dirs)
    deadline = time.monotonic() + timeout_seconds
    found: list[tuple[float, list[str], str]] = []
    timed_out = False
    start_prefix = str(start).rstrip("/") + "/"
    for path in walker.files(start):
        if time.monotonic() > deadline:
            timed_out = True
            break
        rel = relative_to(path, start_prefix)
        if glob.globmatch(rel, rest, flags=GLOB_FLAGS):
            matched = Path(path)
            if keep is not None and not keep(matched):
                continue
            try:
                mtime = matched.stat().st_mtime_ns
            except OSError:
                continue
            found.append((-mtime, rel.split("/"), rel))
    newest = sorted(found) if limit is None else heapq.nsmallest(limit, found)
    base_prefix = str(base).rstrip("/") + "/"
    unreadable = [(relative_to(folder, base_prefix), why) for folder, why in walker.unreadable]
    inside = _inside(base, start)
    return GlobResult(
        base, [inside + rel for _, _, rel in newest], timed_out, unreadable, len(found)
    )


def _inside(base: Path, start: Path) -> str:
    """What leads from `base` to `start`, as the shown paths begin ("" or "src/app/")."""
    return "" if start == base else start.relative_to(base).as_posix() + "/"


def _deny_test(excluded: tuple[str, ...]) -> PathTest | None:
    """The walker's test of the deny list on a path relative to the ignore base: a file
    below an excluded folder matches as well (gitignore lines cover what is inside)."""
    return PathTest.of(excluded) if excluded else None


@attrs.frozen
class Entry:
    # Path relative to the listed folder, "/"-separated.
    relative: str
    is_dir: bool
    size: int | None
    link_target: str | None = None

    def row(self) -> str:
        name = printable_path(self.relative)
        if self.link_target is not None:
            return f"{name} -> {printable_path(self.link_target)}"
        if self.is_dir:
            return f"{name}/"
        return f"{name}\t{self.size}"


def list_entries(
    folder: Path,
    *,
    depth: int,
    ignore_base: Path,
    excluded: Iterable[str],
    unreadable: list[tuple[str, str]] | None = None,
) -> Iterator[Entry]:
    """Entries of `folder` down to `depth` levels (1: direct children), each folder's
    children right after it, in name order. Hidden files are shown; VCS and dependency
    folders, ignored and secret files are not. `unreadable` gets (folder, why) for each
    folder that could not be opened."""
    walker = Walker(ignore_base, hidden=True, excluded=tuple(excluded), skip_dirs=NOISE_DIRS)
    if unreadable is not None:
        walker.unreadable = unreadable

    def visit(
        directory: Path, prefix: str, level: int, layers: list[IgnoreLayer]
    ) -> Iterator[Entry]:
        entries, inner = walker.children(directory, layers)
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_symlink():
                yield Entry(rel, False, None, link_target=readlink(entry.path))
                continue
            if entry.is_dir():
                yield Entry(rel, True, None)
                if level < depth:
                    sub = Path(entry.path)
                    yield from visit(sub, rel + "/", level + 1, inner)
                continue
            try:
                size = entry.stat(follow_symlinks=False).st_size
            except OSError:
                size = None
            yield Entry(rel, False, size)

    yield from visit(folder, "", 1, walker.outer_layers(folder))


def readlink(path: str) -> str:
    try:
        return str(Path(path).readlink())
    except OSError:
        return "?"
