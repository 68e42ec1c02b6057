"""The ignore rules ripgrep applies, for the Python engine, glob and ls.

A file is skipped when the nearest ignore file with an opinion ignores it (`.gitignore`, `.ignore`,
`.rgignore`, and `.git/info/exclude` next to a `.git` folder; deeper files win, later
lines win, `!` re-includes), when it is hidden (its name, or a folder's on the way,
starts with ".") and no ignore line re-included it, or when it matches the excluded
(secret) patterns, which beat everything. Like git,
an ignored folder is not entered, so nothing below it can be re-included. Symbolic links
are not followed (ripgrep's default). The gitignore dialect is pathspec's GitIgnoreSpec.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import attrs
import pathspec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from lsp_server.search.overrides import Overrides
from lsp_server.search.pattern_set import any_match, any_pattern, required_text

IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".rgignore")
# Entries of a big folder looked at together (the deny list's texts searched in their
# names at once).
_CHUNK = 1024
SkipTest = Callable[[os.DirEntry[str], bool], bool]
"""Whether an entry (and whether it is a folder) is left out."""
# Folders ls and glob never show: version control and dependency caches.
NOISE_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__"})


@attrs.frozen(slots=False)  # slots off: may_match is a cached_property
class IgnoreLayer:
    base: Path
    spec: pathspec.GitIgnoreSpec

    @classmethod
    def parse(cls, base: Path, lines: list[str]) -> IgnoreLayer:
        return cls(base, pathspec.GitIgnoreSpec.from_lines(lines))

    def folder_decision(self, rel: str) -> bool | None:
        """Whether the folder `rel` is ignored (None: no line speaks of it). Last matching
        line wins, except that `x/**` matches what is inside x, not x itself (git and rg
        agree; pathspec alone would say that "x/" matches)."""
        for pattern in reversed(self.spec.patterns):
            if pattern.include is None or not pattern.match_file(rel + "/"):
                continue
            text = str(pattern.pattern).rstrip().removeprefix("!")
            if text.endswith("/**") and _matches(text[:-3], rel):
                continue
            return bool(pattern.include)
        return None

    @property
    def prefix(self) -> str:
        return _prefix(str(self.base))

    @functools.cached_property
    def may_match(self) -> Callable[[str], bool]:
        """False when no line of the layer, `!` lines included, matches the path (one
        regex for all the lines: most paths of a big folder match none)."""
        return any_pattern(self.spec)

    @functools.cached_property
    def hint(self) -> tuple[str, ...] | None:
        """Texts one of which every path `may_match` accepts holds (None: no such texts)."""
        return required_text(self.spec, any_line=True)


@functools.lru_cache(maxsize=256)
def _line_pattern(text: str) -> GitIgnoreSpecPattern:
    return GitIgnoreSpecPattern(text)


def _matches(text: str, rel: str) -> bool:
    """The gitignore line `text` names the folder `rel` itself, not one of its parents
    (pathspec counts a match on a parent as a match on everything below it)."""
    if not text:
        return False
    pattern = _line_pattern(text)
    if not pattern.match_file(rel):
        return False
    parts = rel.split("/")
    return not any(pattern.match_file("/".join(parts[:i])) for i in range(1, len(parts)))


def _prefix(base: str) -> str:
    return base.rstrip("/") + "/"


def relative_to(path: str, prefix: str) -> str:
    """`path` relative to the folder whose `_prefix` is `prefix` (plain string work: this
    runs for every entry of every walk)."""
    if path.startswith(prefix):
        return path[len(prefix) :]
    return os.path.relpath(path, prefix).replace(os.sep, "/")


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _layer_for(directory: Path, names: Iterable[str] | None = None) -> IgnoreLayer | None:
    """The folder's own ignore rules; `names` (the folder's entries, when known) spares
    the failed opens of files that are not there."""
    present = set(names) if names is not None else None

    def has(name: str) -> bool:
        return present is None or name in present

    lines: list[str] = []
    if has(".git") and (directory / ".git").is_dir():
        lines += _read_lines(directory / ".git" / "info" / "exclude")
    for name in IGNORE_FILE_NAMES:
        if has(name):
            lines += _read_lines(directory / name)
    if not lines:
        return None
    return IgnoreLayer.parse(directory, lines)


class Walker:
    """Walks folders applying hidden, ignore-file and excluded-pattern rules."""

    def __init__(
        self,
        ignore_base: Path,
        *,
        hidden: bool = False,
        use_ignore_files: bool = True,
        excluded: Sequence[str] = (),
        skip_dirs: Iterable[str] = (),
        overrides: Overrides | None = None,
        overrides_base: Path | None = None,
    ) -> None:
        self.ignore_base = ignore_base
        self.hidden = hidden
        self.use_ignore_files = use_ignore_files
        self.skip_dirs = frozenset(skip_dirs)
        self._excluded = pathspec.GitIgnoreSpec.from_lines(list(excluded)) if excluded else None
        self._excluded_match = None if self._excluded is None else any_match(self._excluded)
        self._excluded_hint = None if self._excluded is None else required_text(self._excluded)
        # `rg --glob` rules, relative to the searched folder; they beat hidden and ignores.
        self.overrides = overrides if overrides else None
        self._base_prefix = _prefix(str(ignore_base))
        self._overrides_prefix = _prefix(str(overrides_base or ignore_base))
        self.unreadable: list[tuple[str, str]] = []
        """(folder, why) for each folder the walk could not open: past PATH_MAX, no
        permission. A search says so rather than "(no matches)" for what it never saw."""

    # -- rules ---------------------------------------------------------------------------
    def outer_layers(self, directory: Path) -> list[IgnoreLayer]:
        """Ignore layers of the folders above `directory` (from the ignore base down),
        outermost first; `children` adds the folder's own."""
        if not self.use_ignore_files or not directory.is_relative_to(self.ignore_base):
            return []
        parts = directory.relative_to(self.ignore_base).parts
        chain = [self.ignore_base.joinpath(*parts[:i]) for i in range(len(parts))]
        layers = [_layer_for(folder) for folder in chain]
        return [layer for layer in layers if layer is not None]

    def _is_excluded(self, path: str, is_dir: bool) -> bool:
        if self._excluded is None:
            return False
        if path.startswith(self._base_prefix):
            rel = path[len(self._base_prefix) :]
        else:
            rel = path.rsplit("/", 1)[-1]
        assert self._excluded_match is not None
        return self._excluded_match(rel + "/" if is_dir else rel)

    def _is_skipped(
        self, path: str, name: str, is_dir: bool, layers: Sequence[tuple[str, IgnoreLayer]]
    ) -> bool:
        if self._is_excluded(path, is_dir):
            return True
        if self.overrides is not None:
            decision = self.overrides.decide(relative_to(path, self._overrides_prefix), is_dir)
            if decision is not None:
                return not decision
        if is_dir and name in self.skip_dirs:
            return True
        for prefix, layer in reversed(layers):
            rel = relative_to(path, prefix)
            if not layer.may_match(rel + "/" if is_dir else rel):
                continue
            decision = layer.folder_decision(rel) if is_dir else layer.spec.check_file(rel).include
            if decision is not None:
                # A `!name` line re-includes even a hidden name (as in ripgrep).
                return decision
        return not self.hidden and name.startswith(".")

    # -- walking -------------------------------------------------------------------------
    def children(
        self, directory: Path | str, outer: list[IgnoreLayer]
    ) -> tuple[list[os.DirEntry[str]], list[IgnoreLayer]]:
        """Entries of one folder that pass the rules, sorted by name, and the layers that
        apply inside it (pass those to `children` of its subfolders)."""
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            self.unreadable.append((str(directory), exc.strerror or str(exc)))
            return [], outer
        layers = outer
        if self.use_ignore_files:
            own = _layer_for(Path(directory), (entry.name for entry in entries))
            if own is not None:
                layers = [*outer, own]
        prefixed = [(layer.prefix, layer) for layer in layers]
        kept = [
            entry
            for entry in entries
            if not self._is_skipped(entry.path, entry.name, _is_dir(entry), prefixed)
        ]
        kept.sort(key=lambda entry: entry.name)
        return kept, layers

    def scan(
        self, directory: Path | str, outer: list[IgnoreLayer], limit: int, deadline: float
    ) -> Scan:
        """`children` for a folder of any size: its entries stream by once, the `limit`
        first in name order are kept (and its kept folders), the rest only counted; a
        million entries cost a pass, not a million objects held and sorted. Past
        `deadline` (time.monotonic) the scan stops where it is."""
        try:
            listing = os.scandir(directory)
        except OSError as exc:
            self.unreadable.append((str(directory), exc.strerror or str(exc)))
            return Scan([], 0, [], outer, False)
        layers = outer
        if self.use_ignore_files:
            own = _layer_for(Path(directory))
            if own is not None:
                layers = [*outer, own]
        prefixed = [(layer.prefix, layer) for layer in layers]
        scan = Scan([], 0, [], layers, False)

        test_for = self._skip_tests(str(directory), prefixed)

        # The page: the `limit` smallest names seen so far (`best`), and the names below
        # the largest of them that came since (`coming`): a folder in hash order soon
        # lets few entries through, so a pass holds and sorts little more than the page.
        best: list[os.DirEntry[str]] = []
        coming: list[os.DirEntry[str]] = []
        largest: str | None = None
        # A chunk of entries none of whose names holds a text of the deny list or of an
        # ignore file (most chunks of a big folder) skips those regexes entry by entry.
        with listing:
            while chunk := list(itertools.islice(listing, _CHUNK)):
                test = test_for("/".join(entry.name for entry in chunk))
                for entry in chunk:
                    is_dir = _is_dir(entry)
                    if test(entry, is_dir):
                        continue
                    scan.count += 1
                    if is_dir:
                        scan.folders.append(entry)
                    if limit > 0 and (largest is None or entry.name < largest):
                        coming.append(entry)
                if coming and (len(coming) >= limit or largest is None):
                    best = heapq.nsmallest(limit, best + coming, key=_name)
                    coming.clear()
                    largest = best[-1].name if len(best) >= limit else None
                if time.monotonic() > deadline:
                    scan.timed_out = True
                    break
        if limit > 0:
            scan.page = heapq.nsmallest(limit, best + coming, key=_name)
        return scan

    def _skip_tests(
        self, directory: str, layers: Sequence[tuple[str, IgnoreLayer]]
    ) -> Callable[[str], SkipTest]:
        """`_is_skipped` for the entries of one folder, with what they share worked out
        once (their paths relative to the base and to each layer): a big folder's pass.
        Given a chunk of the folder's names (joined by "/"), the test for that chunk: it
        leaves out the deny list's regex and the ignore layers' when no name of the chunk
        (nor the folder's path) holds one of their texts (`required_text`)."""
        if self.overrides is not None:
            test: SkipTest = lambda entry, is_dir: self._is_skipped(  # noqa: E731
                entry.path, entry.name, is_dir, layers
            )
            return lambda names: test
        inside = _prefix(directory)
        excluded_from = relative_to(inside, self._base_prefix) if inside.startswith(
            self._base_prefix
        ) else ""  # fmt: skip
        from_layers = [(relative_to(inside, prefix), layer) for prefix, layer in reversed(layers)]
        # What each rule needs in a chunk's names to be looked at (None: always looked at).
        excluded, excluded_hint = self._excluded_match, self._excluded_hint
        if excluded_hint is not None and any(run in excluded_from for run in excluded_hint):
            excluded_hint = None
        hints = [
            None if layer.hint is None or any(run in rel_dir for run in layer.hint) else layer.hint
            for rel_dir, layer in from_layers
        ]
        tests: dict[tuple[bool, tuple[int, ...]], SkipTest] = {}

        def for_chunk(names: str) -> SkipTest:
            deny = excluded is not None and (
                excluded_hint is None or any(run in names for run in excluded_hint)
            )
            used = tuple(
                i for i, hint in enumerate(hints)
                if hint is None or any(run in names for run in hint)
            )  # fmt: skip
            key = (deny, used)
            if key not in tests:
                tests[key] = self._skip_test(
                    excluded_from, [from_layers[i] for i in used], excluded if deny else None
                )
            return tests[key]

        return for_chunk

    def _skip_test(
        self,
        excluded_from: str,
        from_layers: Sequence[tuple[str, IgnoreLayer]],
        excluded: Callable[[str], bool] | None,
    ) -> SkipTest:
        """The test of one folder's entries: `excluded` on their path from the ignore
        base, then `from_layers` (their path from each layer's folder, deepest first)."""
        skip_dirs, hidden = self.skip_dirs, self.hidden

        def skipped(entry: os.DirEntry[str], is_dir: bool) -> bool:
            name = entry.name
            tail = name + "/" if is_dir else name
            if excluded is not None and excluded(excluded_from + tail):
                return True
            if is_dir and name in skip_dirs:
                return True
            for rel_dir, layer in from_layers:
                if not layer.may_match(rel_dir + tail):
                    continue
                rel = rel_dir + name
                decision = (
                    layer.folder_decision(rel) if is_dir else layer.spec.check_file(rel).include
                )
                if decision is not None:
                    return decision
            return not hidden and name.startswith(".")

        return skipped

    def files(self, start: Path) -> Iterator[str]:
        """Paths of the regular files under `start` (not symlinks), depth first in name
        order (strings: a walk of a big tree should not build a Path per file)."""
        stack: list[tuple[Path | str, list[IgnoreLayer]]] = [(start, self.outer_layers(start))]
        while stack:
            directory, outer = stack.pop()
            subdirs: list[str] = []
            entries, layers = self.children(directory, outer)
            for entry in entries:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    subdirs.append(entry.path)
                elif entry.is_file():
                    yield entry.path
            for sub in reversed(subdirs):
                stack.append((sub, layers))


@attrs.define
class Scan:
    page: list[os.DirEntry[str]]
    """The first entries in name order."""
    count: int
    """Entries the rules keep (all of them, not only the page's)."""
    folders: list[os.DirEntry[str]]
    """Every kept folder, in the order the folder listed them."""
    layers: list[IgnoreLayer]
    """The ignore layers that apply inside the folder."""
    timed_out: bool


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
