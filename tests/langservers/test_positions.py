"""Position conversion: code points <-> UTF-16 / UTF-8 / UTF-32, LSP line splitting."""

from __future__ import annotations

import pytest

from lsp_server.langservers.positions import (
    SymbolNotOnLine,
    find_symbol,
    from_lsp_character,
    split_lines,
    to_lsp_character,
)

LINE = '标签 = "😀😀"; 面积 = area_of(make_circle(1.0))'


def test_utf16_counts_non_bmp_characters_twice() -> None:
    index = LINE.index("make_circle")
    assert to_lsp_character(LINE, index, "utf-32") == index
    assert to_lsp_character(LINE, index, "utf-16") == index + 2  # two emoji, 2 units each
    # 标签 and 面积: 3 bytes each (4 chars -> +8); emoji 4 bytes each (-> +6)
    assert to_lsp_character(LINE, index, "utf-8") == index + 8 + 6


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_round_trip_every_index(encoding: str) -> None:
    for index in range(len(LINE) + 1):
        character = to_lsp_character(LINE, index, encoding)  # type: ignore[arg-type]
        assert from_lsp_character(LINE, character, encoding) == index  # type: ignore[arg-type]


def test_position_inside_a_surrogate_pair_maps_to_its_character() -> None:
    emoji = LINE.index("😀")
    first_unit = to_lsp_character(LINE, emoji, "utf-16")
    assert from_lsp_character(LINE, first_unit + 1, "utf-16") == emoji


def test_find_symbol_prefers_whole_words_and_honours_column() -> None:
    line = "valid = id(id)"
    assert find_symbol(line, "id") == line.index(" id(") + 1
    assert find_symbol(line, "id", column=12) == 11
    with pytest.raises(SymbolNotOnLine):
        find_symbol(line, "id", column=1)
    with pytest.raises(SymbolNotOnLine):
        find_symbol(line, "missing")


def test_lines_split_like_lsp_not_like_splitlines() -> None:
    text = "a\x0cb\r\nc\rd\ne\u2028f"
    assert split_lines(text) == ["a\x0cb", "c", "d", "e\u2028f"]
