"""Where each cell of a notebook sits in its JSON text, and how the file was formatted.

Editing a notebook must change only the edited cell's bytes: re-serialising the whole
document (nbformat writes indent=1, sorted keys) would rewrite notebooks saved by other
tools (VS Code, JupyterLab versions, hand-edited files) and produce noisy diffs. So we
find the byte span of every cell in the original text and splice, re-serialising one
cell in the style detected from the file.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"
# A \\u escape of a non-ASCII code point: the file was written with ensure_ascii=True.
_ESCAPED_NON_ASCII = re.compile(
    r"(?<!\\)\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})"
)


class NotebookFormatError(ValueError):
    """The text is not a notebook whose cells we can locate."""


@attrs.frozen
class Span:
    start: int
    end: int


@attrs.frozen
class JsonStyle:
    """How the file was written, so a re-serialised cell looks like its neighbours."""

    indent: str | None
    """One indentation unit (" ", "  ", "\\t"), or None for a one-line file."""
    newline: str
    sort_keys: bool
    ensure_ascii: bool
    key_separator: str
    item_separator: str

    def dumps(self, value: Any, base_indent: str) -> str:
        """Serialise `value` as if it sat at `base_indent` inside the file."""
        separators = (self.item_separator, self.key_separator)
        text = json.dumps(
            value,
            indent=self.indent,
            sort_keys=self.sort_keys,
            ensure_ascii=self.ensure_ascii,
            separators=separators,
        )
        if self.indent is not None:
            text = text.replace("\n", "\n" + base_indent)
        return text.replace("\n", self.newline) if self.newline != "\n" else text


@attrs.frozen
class NotebookLayout:
    text: str
    document: dict[str, Any]
    cells_span: Span
    """The `[...]` of the top-level "cells" array."""
    cell_spans: list[Span]
    style: JsonStyle

    def cell_indent(self) -> str:
        """The whitespace in front of a cell on its line (the array's element indentation)."""
        if self.style.indent is None:
            return ""
        if self.cell_spans:
            return _line_indent(self.text, self.cell_spans[0].start)
        return self.cells_close_indent() + self.style.indent

    def cells_close_indent(self) -> str:
        """The indentation of the line holding `"cells": [`, where its `]` goes."""
        line_start = self.text.rfind("\n", 0, self.cells_span.start) + 1
        line = self.text[line_start : self.cells_span.start]
        return line[: len(line) - len(line.lstrip(" \t"))]


def _skip_ws(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


def _expect(text: str, index: int, char: str) -> int:
    index = _skip_ws(text, index)
    if index >= len(text) or text[index] != char:
        raise NotebookFormatError(f"expected {char!r} at offset {index}")
    return index + 1


def _line_indent(text: str, index: int) -> str:
    line_start = text.rfind("\n", 0, index) + 1
    prefix = text[line_start:index]
    return prefix if prefix.strip() == "" else ""


@attrs.frozen
class Member:
    key: str
    key_start: int
    value: Span


def _top_level_members(text: str) -> list[Member]:
    """Every key of the top-level object with where its key and value sit."""
    index = _expect(text, 0, "{")
    members: list[Member] = []
    index = _skip_ws(text, index)
    if index < len(text) and text[index] == "}":
        return members
    while True:
        key_start = _skip_ws(text, index)
        key, index = _DECODER.raw_decode(text, key_start)
        if not isinstance(key, str):
            raise NotebookFormatError("object key is not a string")
        index = _skip_ws(text, _expect(text, index, ":"))
        _, end = _DECODER.raw_decode(text, index)
        members.append(Member(key, key_start, Span(index, end)))
        index = _skip_ws(text, end)
        if index < len(text) and text[index] == ",":
            index += 1
            continue
        _expect(text, index, "}")
        return members


def _array_elements(text: str, span: Span) -> list[Span]:
    index = _expect(text, span.start, "[")
    elements: list[Span] = []
    index = _skip_ws(text, index)
    if text[index] == "]":
        return elements
    while True:
        index = _skip_ws(text, index)
        _, end = _DECODER.raw_decode(text, index)
        elements.append(Span(index, end))
        index = _skip_ws(text, end)
        if text[index] == ",":
            index += 1
            continue
        if text[index] != "]":
            raise NotebookFormatError(f"expected ',' or ']' at offset {index}")
        return elements


def _detect_style(text: str, document: dict[str, Any], members: list[Member]) -> JsonStyle:
    newline = "\r\n" if "\r\n" in text else "\n"
    indent: str | None = None
    key_separator, item_separator = ": ", ","
    if members:
        first = members[0]
        if "\n" in text[: first.key_start]:
            # The top-level object opens at column 0, so its first key's indentation is one unit.
            indent = _line_indent(text, first.key_start) or None
        colon = text.index(":", text.index('"', first.key_start + 1))
        gap = text[colon + 1 : first.value.start]
        key_separator = ":" + (gap if "\n" not in gap else " ")
        if indent is None and len(members) > 1:
            between = text[first.value.end : members[1].key_start]
            item_separator = ", " if between.endswith(" ") else ","
    has_raw_non_ascii = any(ord(ch) > 127 for ch in text)
    ensure_ascii = not has_raw_non_ascii and bool(_ESCAPED_NON_ASCII.search(text))
    return JsonStyle(
        indent=indent,
        newline=newline,
        sort_keys=_keys_sorted(document),
        ensure_ascii=ensure_ascii,
        key_separator=key_separator,
        item_separator=item_separator,
    )


def _keys_sorted(document: dict[str, Any]) -> bool:
    """True when every object we can see (top level and cells) lists its keys sorted."""
    objects: list[dict[str, Any]] = [document]
    cells = document.get("cells")
    if isinstance(cells, list):
        objects.extend(cell for cell in cells if isinstance(cell, dict))
    return all(list(obj) == sorted(obj) for obj in objects)


def parse_layout(text: str) -> NotebookLayout:
    """Locate the cells of a notebook's JSON text; raises NotebookFormatError."""
    try:
        document = json.loads(text)
        members = _top_level_members(text)
    except NotebookFormatError:
        raise
    except (IndexError, ValueError) as exc:
        raise NotebookFormatError(f"not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise NotebookFormatError("the top level is not a JSON object")
    cells_span = next((m.value for m in members if m.key == "cells"), None)
    if cells_span is None or not isinstance(document.get("cells"), list):
        raise NotebookFormatError("no top-level 'cells' array")
    return NotebookLayout(
        text=text,
        document=document,
        cells_span=cells_span,
        cell_spans=_array_elements(text, cells_span),
        style=_detect_style(text, document, members),
    )
