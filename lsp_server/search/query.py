"""What a search asks for and what an engine answers, independent of the engine."""

from __future__ import annotations

from collections.abc import Callable
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
    # Told each result file's path as the engine finds it, while the search still runs:
    # the caller's own checks of a file overlap the search instead of following it.
    on_file: Callable[[str], object] | None = attrs.field(default=None, eq=False)


@attrs.define  # not frozen: a frozen attrs class is built 2.5x slower, once per result line
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
    # Said to the model under the results (files the tool left out, and why).
    notes: list[str] = attrs.Factory(list)

    def sort(self) -> None:
        """Path order of `rg --sort path`: component by component."""
        self.files.sort(key=lambda hits: hits.path.split("/"))

    @property
    def total_matched_lines(self) -> int:
        return sum(hits.matched_lines for hits in self.files)


_HEAD_CHARS = 200
_TAIL_CHARS = 150
_BEFORE_MATCH = 50


def cut_line(text: str, number: int, match_at: int | None = None) -> str:
    """A long line as its head, the first match in some context (when the head does not
    show it), and its tail; each gap says how many chars it leaves out and how to see
    them."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    how = f": read_file offset={number - 1} limit=1 shows the line"
    tail_from = len(text) - _TAIL_CHARS
    parts = [text[:_HEAD_CHARS]]
    position = _HEAD_CHARS
    if match_at is not None and match_at + _BEFORE_MATCH > _HEAD_CHARS and match_at < tail_from:
        start = max(_HEAD_CHARS, match_at - _BEFORE_MATCH)
        stop = min(tail_from, start + MAX_LINE_CHARS - _HEAD_CHARS - _TAIL_CHARS)
        if start > position:
            parts.append(f" [... {start - position} chars left out{how} ...] ")
        parts.append(text[start:stop])
        position = stop
    if tail_from > position:
        parts.append(f" [... {tail_from - position} chars of this line left out{how} ...] ")
    parts.append(text[max(tail_from, position) :])
    return "".join(parts)
