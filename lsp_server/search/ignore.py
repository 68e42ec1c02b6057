"""The ignore rules ripgrep applies, for the Python engine, glob and ls.

A file is skipped when it is hidden (its name, or a folder's on the way, starts with "."),
when the nearest ignore file with an opinion ignores it (`.gitignore`, `.ignore`,
`.rgignore`, and `.git/info/exclude` next to a `.git` folder; deeper files win, later
lines win, `!` re-includes), or when it matches the excluded (secret) patterns. Like git,
an ignored folder is not entered, so nothing below it can be re-included. Symbolic links
are not followed (ripgrep's default). The gitignore dialect is pathspec's GitIgnoreSpec.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import attrs
import pathspec

from lsp_server.search.overrides import Overrides

IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".rgignore")
# Folders ls and glob never show: version control and dependency caches.
NOISE_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__"})


@attrs.frozen
class IgnoreLayer:
    base: Path
    spec: pathspec.GitIgnoreSpec


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _layer_for(directory: Path) -> IgnoreLayer | None:
    lines: list[str] = []
    if (directory / ".git").is_dir():
        lines += _read_lines(directory / ".git" / "info" / "exclude")
    for name in IGNORE_FILE_NAMES:
        lines += _read_lines(directory / name)
    if not lines:
        return None
    return IgnoreLayer(directory, pathspec.GitIgnoreSpec.from_lines(lines))


def _relative(path: Path, base: Path) -> str:
    return os.path.relpath(path, base).replace(os.sep, "/")


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
        self._layer_cache: dict[Path, IgnoreLayer | None] = {}
        # `rg --glob` rules, relative to the searched folder; they beat hidden and ignores.
        self.overrides = overrides if overrides else None
        self.overrides_base = overrides_base or ignore_base

    # -- rules ---------------------------------------------------------------------------
    def _layer(self, directory: Path) -> IgnoreLayer | None:
        if directory not in self._layer_cache:
            self._layer_cache[directory] = _layer_for(directory) if self.use_ignore_files else None
        return self._layer_cache[directory]

    def layers_for(self, directory: Path) -> list[IgnoreLayer]:
        """Ignore layers that apply inside `directory`, outermost first."""
        chain = [directory]
        if directory.is_relative_to(self.ignore_base):
            chain = [self.ignore_base, *self._between(directory)]
        layers = [self._layer(d) for d in chain]
        return [layer for layer in layers if layer is not None]

    def _between(self, directory: Path) -> list[Path]:
        parts = directory.relative_to(self.ignore_base).parts
        return [self.ignore_base.joinpath(*parts[: i + 1]) for i in range(len(parts))]

    def is_excluded(self, path: Path, is_dir: bool) -> bool:
        if self._excluded is None:
            return False
        base = self.ignore_base if path.is_relative_to(self.ignore_base) else path.parent
        rel = _relative(path, base) + ("/" if is_dir else "")
        return self._excluded.match_file(rel)

    def is_skipped(self, path: Path, is_dir: bool, layers: Sequence[IgnoreLayer]) -> bool:
        if self.is_excluded(path, is_dir):
            return True
        if self.overrides is not None:
            decision = self.overrides.decide(_relative(path, self.overrides_base), is_dir)
            if decision is not None:
                return not decision
        name = path.name
        if not self.hidden and name.startswith("."):
            return True
        if is_dir and name in self.skip_dirs:
            return True
        suffix = "/" if is_dir else ""
        for layer in reversed(layers):
            decision = layer.spec.check_file(_relative(path, layer.base) + suffix).include
            if decision is not None:
                return decision
        return False

    # -- walking -------------------------------------------------------------------------
    def children(self, directory: Path, layers: Sequence[IgnoreLayer]) -> list[os.DirEntry[str]]:
        """Entries of one folder that pass the rules, sorted by name."""
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            return []
        kept = [
            entry
            for entry in entries
            if not self.is_skipped(Path(entry.path), _is_dir(entry), layers)
        ]
        kept.sort(key=lambda entry: entry.name)
        return kept

    def files(self, start: Path) -> Iterator[Path]:
        """Regular files under `start` (not symlinks), depth first in name order."""
        stack: list[tuple[Path, list[IgnoreLayer]]] = [(start, self.layers_for(start))]
        while stack:
            directory, layers = stack.pop()
            subdirs: list[Path] = []
            for entry in self.children(directory, layers):
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    subdirs.append(Path(entry.path))
                elif entry.is_file():
                    yield Path(entry.path)
            for sub in reversed(subdirs):
                stack.append((sub, self.descend(sub, layers)))

    def descend(self, sub: Path, layers: list[IgnoreLayer]) -> list[IgnoreLayer]:
        """The layers inside `sub`, a child folder of the one `layers` belong to."""
        layer = self._layer(sub)
        return [*layers, layer] if layer is not None else layers


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
