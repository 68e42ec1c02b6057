"""Reading rg's output into FileHits: its `--json` event stream, its plain `--null`
line records, and its `--null` listings of file names and counts.

rg's stdout arrives in chunks (rg writes each file's results at once) and is parsed a
chunk at a time. JSON: the complete lines of a chunk are one `json.loads` of a
JSON array (rg escapes newlines inside strings, so every raw newline ends an event),
a fifth of the cost of one `json.loads` per line. Plain records (`path\0N:C:text` for a
match, `path\0N-text` for a context line) are a fifth of the JSON's size and cheaper
still; they are read only where they say exactly what the JSON says, and anything else
in them (a path holding a newline, rg's note on a binary file it stopped reading) makes
the reader give up so that the search runs again with `--json`. A last line cut by a
kill (timeout, cancel) is dropped.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Callable
from typing import Any

from lsp_server.search.query import (
    MAX_LINE_CHARS,
    FileHits,
    Line,
    SearchOutcome,
    SearchQuery,
    cut_line,
)


def _text(value: dict[str, Any]) -> str:
    if "text" in value:
        text: str = value["text"]
        return text
    return base64.b64decode(value["bytes"]).decode("utf-8", errors="replace")


def _match_char(data: dict[str, Any], line: str) -> int | None:
    """Where the first match starts in a long line, in chars (rg gives a byte offset)."""
    submatches = data.get("submatches") or []
    if len(line) <= MAX_LINE_CHARS or not submatches:
        return None
    return _char_at(line, submatches[0]["start"])


def _char_at(line: str, start: int) -> int:
    """The char offset of byte `start`, counted in the line as decoded (a byte that was
    not UTF-8 counts as the three bytes of its U+FFFD)."""
    return len(line.encode("utf-8", "surrogateescape")[:start].decode("utf-8", "replace"))


def display_path(value: dict[str, Any]) -> str:
    """A path as rg gives it (text, or base64 bytes when it is not UTF-8), without './'."""
    raw = value["text"] if "text" in value else os.fsdecode(base64.b64decode(value["bytes"]))
    return raw[2:] if raw.startswith("./") else raw


class JsonEvents:
    """Folds rg's JSON event stream, fed in chunks of any size, into FileHits."""

    def __init__(self, outcome: SearchOutcome, keep_lines: bool) -> None:
        self.outcome = outcome
        self.keep_lines = keep_lines
        self.current: FileHits | None = None
        self.last_line = 0
        # The start of a line whose end has not arrived yet.
        self.partial: list[bytes] = []

    def feed(self, chunk: bytes) -> None:
        end = chunk.rfind(b"\n")
        if end < 0:
            self.partial.append(chunk)
            return
        complete = chunk[:end]
        if self.partial:
            complete = b"".join((*self.partial, complete))
            self.partial.clear()
        if end + 1 < len(chunk):
            self.partial.append(chunk[end + 1 :])
        if complete:
            self._fold(json.loads(b"[" + complete.replace(b"\n", b",") + b"]"))

    def _fold(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            kind = event["type"]
            if kind == "match" or kind == "context":
                if self.current is not None:
                    self._lines(event["data"], kind == "match")
            elif kind == "begin":
                self.current = FileHits(display_path(event["data"]["path"]))
                self.last_line = 0
            elif kind == "end" and self.current is not None:
                if self.current.matched_lines:
                    self.outcome.files.append(self.current)
                self.current = None

    def _lines(self, data: dict[str, Any], is_match: bool) -> None:
        assert self.current is not None
        lines = _text(data["lines"]).split("\n")
        if lines[-1] == "":
            lines.pop()
        first: int = data["line_number"]
        for offset, text in enumerate(lines):
            number = first + offset
            if number <= self.last_line:
                continue  # a multiline match that shares its first line with the last
            self.last_line = number
            self.current.matched_lines += is_match
            if self.keep_lines:
                match_at = _match_char(data, text) if is_match and offset == 0 else None
                shown = cut_line(text, number, match_at)
                self.current.lines.append(Line(number, shown, is_match))


# A plain record: path, NUL, `N:C:` (a match: line and byte column) or `N-` (context),
# the line's text, newline. A path holding a newline does not match.
_RECORD = re.compile(rb"([^\0\n]*)\0(\d+)(?::(\d+):|-)([^\n]*)\n")


class LineRecords:
    """Folds rg's plain records (`--no-heading --with-filename --null --line-number
    --column --no-context-separator`, a single-line search of a folder) into FileHits,
    as JsonEvents would fold the same search's JSON. `odd` is set (and the rest of the
    output ignored) at the first line that is not a record: rg's stdout then holds
    something only the JSON says unambiguously."""

    def __init__(
        self, outcome: SearchOutcome, on_file: Callable[[str], object] | None = None
    ) -> None:
        self.outcome = outcome
        self.on_file = on_file
        self.current: FileHits | None = None
        self.current_raw = b""
        self.partial: list[bytes] = []
        self.odd = False

    def feed(self, chunk: bytes) -> None:
        if self.odd:
            return
        self.partial.append(chunk)
        if b"\n" not in chunk:
            return
        buf = b"".join(self.partial) if len(self.partial) > 1 else chunk
        self.partial.clear()
        end = buf.rfind(b"\n") + 1
        if end < len(buf):
            self.partial.append(buf[end:])
        self._records(buf, end)

    def _records(self, buf: bytes, end: int) -> None:
        # A record holds exactly one newline, its last byte: as many records as newlines
        # means that every line was one.
        records = _RECORD.findall(buf, 0, end)
        if len(records) != buf.count(b"\n", 0, end):
            self.odd = True
            return
        current, current_raw, files = self.current, self.current_raw, self.outcome.files
        for raw_path, raw_number, column, raw_text in records:
            if current is None or raw_path != current_raw:
                current = FileHits(display_path({"text": os.fsdecode(raw_path)}))
                current_raw = raw_path
                files.append(current)
                if self.on_file is not None:
                    self.on_file(current.path)
            number = int(raw_number)
            text = raw_text.decode("utf-8", errors="replace")
            if len(text) > MAX_LINE_CHARS:
                match_at = _char_at(text, int(column) - 1) if column else None
                text = cut_line(text, number, match_at)
            is_match = bool(column)
            current.matched_lines += is_match
            current.lines.append(Line(number, text, is_match))
        self.current, self.current_raw = current, current_raw


def read_listing(raw: bytes, query: SearchQuery, outcome: SearchOutcome) -> None:
    """`--null` output: `path\\0` per file, or `path\\0count\\n` per file."""
    if query.mode == "files_with_matches":
        for name in raw.split(b"\0"):
            if name:
                outcome.files.append(FileHits(display_path({"text": os.fsdecode(name)}), 1))
        return
    # Names may hold newlines; counts never do: split at NULs, then at the first newline.
    tokens = raw.split(b"\0")
    name = tokens[0]
    for token in tokens[1:]:
        count, _, following = token.partition(b"\n")
        outcome.files.append(FileHits(display_path({"text": os.fsdecode(name)}), int(count)))
        name = following
