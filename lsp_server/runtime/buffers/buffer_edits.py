"""Pure helpers for changing an editor buffer: text -> LSP TextEdits, and text comparison.

An edit to an open buffer is sent as the smallest set of whole-line replacements (difflib
over lines), not as one replacement of the whole text: the editor then keeps the user's
cursor, marks and folds on untouched lines, and its undo step covers only what changed.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # lsprotocol's types cost about 0.3 s to import: only an editor needs them
    from lsprotocol import types as lsp


def text_hash(text: str) -> str:
    """sha256 of a buffer's text (UTF-8): the content half of a buffer version."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def same_text(buffer: str, disk: str) -> bool:
    """Whether a buffer holds the same text as the file on disk.

    Editors report a buffer's text with their own line separator (Neovim sends "\n" for a
    CRLF file with fileformat=dos in some versions and "\r\n" in others), so line endings
    do not count as a difference: saving the buffer would write the file's own endings.
    """
    return buffer == disk or normalize_newlines(buffer) == normalize_newlines(disk)


def position_at(text: str, offset: int, units: Callable[[str], int]) -> lsp.Position:
    """The LSP position of a code-point offset; `units` counts a string in the
    negotiated position encoding (pygls' PositionCodec.client_num_units)."""
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    from lsprotocol import types as lsp

    return lsp.Position(line=line, character=units(text[line_start:offset]))


def text_edits(before: str, after: str, units: Callable[[str], int]) -> list[lsp.TextEdit]:
    """Line-level edits that turn `before` into `after` (empty when they are equal)."""
    from lsprotocol import types as lsp

    old_lines = before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    offsets = [0]
    for line in old_lines:
        offsets.append(offsets[-1] + len(line))
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    edits: list[lsp.TextEdit] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = offsets[i1], offsets[i2]
        edits.append(
            lsp.TextEdit(
                range=lsp.Range(
                    start=position_at(before, start, units), end=position_at(before, end, units)
                ),
                new_text="".join(new_lines[j1:j2]),
            )
        )
    return edits
