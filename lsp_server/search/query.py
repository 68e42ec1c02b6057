"""What a search asks for and what an engine answers, independent of the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import attrs

OutputMode = Literal["content", "files_with_matches", "count"]

# Longer lines are cut (the model rarely needs the rest of a minified line).
MAX_LINE_CHARS = 500
# ripgrep reads files in buffers of this size and gives up on a file at the first buffer
# holding a NUL byte; the Python engine copies that rule (see python_engine).
BINARY_SNIFF_BYTES = 64 * 1024


class InvalidPattern(Exception):
    """The regex does not compile; the message names the problem and its position."""


class InvalidInclude(Exception):
    """The include glob does not parse (unbalanced braces or brackets)."""


class EngineFailure(Exception):
    """The engine could not run at all (not a per-file problem)."""


@attrs.frozen
class SearchQuery:
    pattern: str
    # A directory (searched recursively with the ignore rules) or a single file.
    target: Path
    # Ignore files (.gitignore ...) are read from this folder down to `target`.
    ignore_base: Path
    include: str | None = None
    ignore_case: bool = False
    mode: OutputMode = "content"
    context: int = 0
    multiline: bool = False
    timeout_seconds: float = 30.0
    # gitignore-style patterns of files never searched (the workspace's secret deny list).
    excluded: tuple[str, ...] = ()


@attrs.frozen
class Line:
    number: int
    text: str
    is_match: bool


@attrs.define
class FileHits:
    """Results in one file. `path` is relative to the query target, '/'-separated
    (for a file target it is the file's name)."""

    path: str
    matched_lines: int = 0
    # Matching lines and their context lines, in line order (content mode only).
    lines: list[Line] = attrs.Factory(list)


@attrs.define
class SearchOutcome:
    files: list[FileHits] = attrs.Factory(list)
    timed_out: bool = False
    # Per-file problems (unreadable files) that did not stop the search.
    warnings: list[str] = attrs.Factory(list)
    engine: str = ""

    def sort(self) -> None:
        """Path order of `rg --sort path`: component by component."""
        self.files.sort(key=lambda hits: hits.path.split("/"))

    @property
    def total_matched_lines(self) -> int:
        return sum(hits.matched_lines for hits in self.files)


def cut_line(text: str) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]} [... {len(text) - MAX_LINE_CHARS} more chars]"
