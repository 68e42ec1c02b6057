"""buffer_edits: the TextEdits sent to an editor turn the buffer into exactly the new text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pygls.workspace import PositionCodec
from pygls.workspace.text_document import TextDocument

from lsp_server.runtime.buffers.buffer_edits import position_at, same_text, text_edits

UTF16 = PositionCodec(lsp.PositionEncodingKind.Utf16)


def apply_like_an_editor(text: str, edits: list[lsp.TextEdit], encoding: str) -> str:
    """Apply edits the way pygls applies an incremental didChange (last edit first)."""
    codec = PositionCodec(encoding)
    document = TextDocument("file:///x", text, version=1, position_codec=codec)
    for edit in sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        document.apply_change(
            lsp.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)
        )
    return document.source


def test_one_changed_line_is_one_small_edit() -> None:
    before = "one\ntwo\nthree\n"
    edits = text_edits(before, "one\nTWO\nthree\n", UTF16.client_num_units)
    assert len(edits) == 1
    edit = edits[0]
    assert (edit.range.start.line, edit.range.start.character) == (1, 0)
    assert (edit.range.end.line, edit.range.end.character) == (2, 0)
    assert edit.new_text == "TWO\n"


def test_equal_texts_give_no_edit() -> None:
    assert text_edits("a\nb", "a\nb", UTF16.client_num_units) == []


def test_end_without_final_newline() -> None:
    edits = text_edits("a\nb", "a\nb\nc", UTF16.client_num_units)
    assert apply_like_an_editor("a\nb", edits, lsp.PositionEncodingKind.Utf16) == "a\nb\nc"


def test_positions_count_utf16_units() -> None:
    # "😀" is two UTF-16 units, one code point.
    assert position_at("😀x\nz", 2, UTF16.client_num_units) == lsp.Position(line=0, character=3)


def test_same_text_ignores_line_endings_only() -> None:
    assert same_text("a\nb\n", "a\r\nb\r\n")
    assert not same_text("a\nb\n", "a\nc\n")


lines = st.lists(st.sampled_from(["", "x", "y = 1", "é😀", "\t z", "a b c"]), max_size=8)
endings = st.sampled_from(["\n", "\r\n"])


@given(lines, lines, endings, st.booleans(), st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_edits_reproduce_the_new_text(
    old: list[str], new: list[str], ending: str, final_newline: bool, encoding: str
) -> None:
    before = ending.join(old) + (ending if final_newline and old else "")
    after = ending.join(new) + (ending if final_newline and new else "")
    codec = PositionCodec(encoding)
    edits = text_edits(before, after, codec.client_num_units)
    assert apply_like_an_editor(before, edits, encoding) == after
