"""The pure-Python engine: same files, same lines, same order as the ripgrep engine.

Used when no rg binary is installed or when config says `search.engine = "python"`.
Known differences (documented, rarely visible): a NUL byte after the first 64 KiB of a file
stops ripgrep at a buffer boundary, here at the last line before the NUL; Python's `re`
case folding and Unicode tables differ from Rust's in rare characters; `\\p{..}` classes
are refused (see pyregex).
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

from lsp_server.search.ignore import Walker, relative_to
from lsp_server.search.overrides import Overrides
from lsp_server.search.pyregex import compile_pattern
from lsp_server.search.query import (
    BINARY_SNIFF_BYTES,
    MAX_LINE_CHARS,
    FileHits,
    Line,
    SearchOutcome,
    SearchQuery,
    cut_line,
)

_UTF8_BOM = b"\xef\xbb\xbf"


def read_searchable_text(path: Path | str) -> str | None:
    """The text ripgrep would search, or None for a binary file (NUL in the first buffer)."""
    with open(path, "rb") as handle:  # noqa: PTH123 - str paths: no Path per file in a walk
        data = handle.read()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    nul = data.find(b"\0")
    if nul != -1:
        if nul < BINARY_SNIFF_BYTES:
            return None
        data = data[: data.rfind(b"\n", 0, nul) + 1]
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    return data.decode("utf-8", errors="replace")


def matching_line_numbers(regex: re.Pattern[str], text: str, multiline: bool) -> list[int]:
    """1-based numbers of the lines a match touches (line mode: a match never spans lines)."""
    numbers: list[int] = []
    if multiline:
        line_number, counted_to = 1, 0
        for found in regex.finditer(text):
            start, end = found.span()
            if start >= len(text) and (not text or text.endswith("\n")):
                break
            line_number += text.count("\n", counted_to, start)
            counted_to = start
            last = line_number + text.count("\n", start, max(start, end - 1))
            first = max(line_number, numbers[-1] + 1) if numbers else line_number
            numbers.extend(range(first, last + 1))
        return numbers
    pos = 0
    line_number = 1
    counted_to = 0
    while True:
        match = regex.search(text, pos)
        if match is None:
            break
        start = match.start()
        if start >= len(text) and (not text or text.endswith("\n")):
            break
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        if line_end == -1:
            line_end = len(text)
        line_number += text.count("\n", counted_to, line_start)
        counted_to = line_start
        if match.end() <= line_end or regex.search(text[line_start:line_end]):
            numbers.append(line_number)
        if line_end >= len(text):
            break
        pos = line_end + 1
    return numbers


def _file_hits(
    rel: str, text: str, numbers: list[int], query: SearchQuery, regex: re.Pattern[str]
) -> FileHits:
    hits = FileHits(rel, matched_lines=len(numbers))
    if query.mode != "content":
        return hits
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    wanted = set(numbers)
    shown: set[int] = set()
    for number in numbers:
        shown.update(range(max(1, number - query.context), number + query.context + 1))
    hits.lines = [
        Line(n, _cut(lines[n - 1], n, regex if n in wanted else None), n in wanted)
        for n in sorted(shown)
        if n <= len(lines)
    ]
    return hits


def _cut(line: str, number: int, regex: re.Pattern[str] | None) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    found = regex.search(line) if regex is not None else None
    return cut_line(line, number, found.start() if found else None)


def search(query: SearchQuery, stop: threading.Event | None = None) -> SearchOutcome:
    """`stop` set: give up now (the caller no longer waits for the answer)."""
    regex = compile_pattern(query.pattern, ignore_case=query.ignore_case, multiline=query.multiline)
    deadline = time.monotonic() + query.timeout_seconds
    outcome = SearchOutcome(engine="python")
    if query.target.is_dir():
        overrides = Overrides([query.include] if query.include else [])
        walker = Walker(
            query.ignore_base,
            excluded=query.excluded,
            overrides=overrides,
            overrides_base=query.target,
        )
        candidates = walker.files(query.target)
        base = query.target
    else:
        # An explicitly named file is searched whatever the ignore rules and the include
        # glob say (as rg does); the caller has already refused secret files.
        candidates = iter([str(query.target)])
        base = query.target.parent
    base_prefix = str(base).rstrip("/") + "/"
    for path in candidates:
        if time.monotonic() > deadline or (stop is not None and stop.is_set()):
            outcome.timed_out = True
            break
        rel = relative_to(path, base_prefix)
        try:
            text = read_searchable_text(path)
        except OSError as exc:
            outcome.warnings.append(f"{rel}: {exc.strerror or exc}")
            continue
        if text is None:
            continue
        numbers = matching_line_numbers(regex, text, query.multiline)
        if numbers:
            outcome.files.append(_file_hits(rel, text, numbers, query, regex))
    if query.target.is_dir():  # the folders the walk could not open, as rg names them
        outcome.warnings += [
            f"{relative_to(folder, base_prefix)}: {why}" for folder, why in walker.unreadable
        ]
    outcome.sort()
    return outcome
