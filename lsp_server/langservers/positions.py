"""Positions: Python string indices <-> LSP `character` offsets in the negotiated encoding.

LSP counts `character` in UTF-16 code units unless the server chose "utf-8" (bytes) or
"utf-32" (code points) from the client's general.positionEncodings. Python strings index
code points, so a CJK character is 1 everywhere but 3 UTF-8 bytes, and an emoji outside the
BMP is 2 UTF-16 units and 4 UTF-8 bytes. Lines are split the LSP way (\\n, \\r\\n, \\r only),
not with str.splitlines (which also splits on \\x0b, \\x0c, U+2028 ...).
"""

from __future__ import annotations

import re
from typing import Literal

PositionEncoding = Literal["utf-16", "utf-8", "utf-32"]

_LSP_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The document's lines as the server numbers them (0-based index = LSP line)."""
    return _LSP_LINE_BREAK.split(text)


def _units(char: str, encoding: PositionEncoding) -> int:
    code = ord(char)
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    if encoding == "utf-8":
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 1


def to_lsp_character(line: str, index: int, encoding: PositionEncoding) -> int:
    """Code-point index into `line` -> the LSP character offset."""
    if encoding == "utf-32":
        return index
    return sum(_units(c, encoding) for c in line[:index])


def from_lsp_character(line: str, character: int, encoding: PositionEncoding) -> int:
    """LSP character offset -> code-point index (clamped to the line; a position inside a
    surrogate pair or a multi-byte sequence maps to that character)."""
    if encoding == "utf-32":
        return min(character, len(line))
    used = 0
    for index, char in enumerate(line):
        if used >= character:
            return index
        used += _units(char, encoding)
        if used > character:
            return index
    return len(line)


class SymbolNotOnLine(ValueError):
    """The symbol text does not occur on the line (or not as often as `column` asks)."""


_WORD = re.compile(r"\w", re.UNICODE)


def find_symbol(line: str, symbol: str, column: int | None = None) -> int:
    """Code-point index of the symbol on the line.

    Without `column`: the first occurrence that stands as a whole word (so `id` does not
    match inside `valid`), else the first occurrence at all. With `column` (1-based,
    counted in characters as shown to the model): the occurrence that covers that column.
    """
    if not symbol:
        raise SymbolNotOnLine("empty symbol")
    starts = [m.start() for m in re.finditer(re.escape(symbol), line)]
    if not starts:
        raise SymbolNotOnLine(f"{symbol!r} does not occur on the line")
    if column is not None:
        wanted = column - 1
        for start in starts:
            if start <= wanted < start + len(symbol):
                return start
        raise SymbolNotOnLine(f"{symbol!r} does not occur at column {column}")

    def whole_word(start: int) -> bool:
        end = start + len(symbol)
        before = line[start - 1] if start > 0 else ""
        after = line[end] if end < len(line) else ""
        return not (_WORD.match(before) if before else False) and not (
            _WORD.match(after) if after else False
        )

    for start in starts:
        if whole_word(start):
            return start
    return starts[0]
