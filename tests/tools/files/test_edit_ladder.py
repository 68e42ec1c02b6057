"""The matching ladder: one test per level, uniqueness at each level, clear failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import call_tool, make_runtime, text_of


async def _edit(tmp_path: Path, content: bytes, old: str, new: str, **extra: object):
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    (root / "f.py").write_bytes(content)
    runtime = make_runtime(root)
    await call_tool(runtime, "read_file", {"path": "f.py"})
    result = await call_tool(
        runtime, "edit_file", {"path": "f.py", "old_string": old, "new_string": new, **extra}
    )
    return result, (root / "f.py").read_bytes()


async def test_exact(tmp_path: Path) -> None:
    result, data = await _edit(tmp_path, b"a = 1\nb = 2\n", "b = 2", "b = 3")
    assert not result.is_error and data == b"a = 1\nb = 3\n"
    assert "fuzzy" not in text_of(result)


async def test_newline_level_on_crlf_file(tmp_path: Path) -> None:
    result, data = await _edit(
        tmp_path, b"a = 1\r\nb = 2\r\nc = 3\r\n", "a = 1\nb = 2", "a = 1\nb = 20"
    )
    assert not result.is_error, text_of(result)
    assert data == b"a = 1\r\nb = 20\r\nc = 3\r\n"
    assert "(fuzzy match: newline)" in text_of(result)


async def test_trailing_whitespace_level(tmp_path: Path) -> None:
    result, data = await _edit(
        tmp_path, b"x = 1   \ny = 2\t\nz = 3\n", "x = 1\ny = 2", "x = 10\ny = 20"
    )
    assert not result.is_error, text_of(result)
    assert data == b"x = 10\ny = 20\nz = 3\n"
    assert "trailing whitespace" in text_of(result)


async def test_indentation_level_maps_file_indentation(tmp_path: Path) -> None:
    source = b"def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n"
    result, data = await _edit(
        tmp_path, source, "if x:\n    return 1", "if x:\n    y = 1\n    return y"
    )
    assert not result.is_error, text_of(result)
    assert data == b"def f():\n\tif x:\n\t\ty = 1\n\t\treturn y\n\treturn 2\n"
    assert "indentation" in text_of(result)


async def test_line_number_prefix_level(tmp_path: Path) -> None:
    result, data = await _edit(
        tmp_path, b"one\ntwo\nthree\n", "     2→two\n     3→three", "     2→TWO\n     3→three"
    )
    assert not result.is_error, text_of(result)
    assert data == b"one\nTWO\nthree\n"
    assert "line numbers" in text_of(result)


@pytest.mark.parametrize(
    ("content", "old", "lines"),
    [
        (b"x = 1\nx = 1\n", "x = 1", "lines 1, 2"),  # exact
        (b"x = 1\r\ny\r\nx = 1\r\ny\r\n", "x = 1\ny", "lines 1, 3"),  # newline
        (b"x = 1 \ny\nx = 1\t\ny\n", "x = 1\ny", "lines 1, 3"),  # trailing whitespace
        (b"  x = 1\n  y\n\tx = 1\n\ty\n", "x = 1\ny", "lines 1, 3"),  # indentation
    ],
)
async def test_uniqueness_is_enforced_at_each_level(
    tmp_path: Path, content: bytes, old: str, lines: str
) -> None:
    result, data = await _edit(tmp_path, content, old, "changed")
    assert result.error is not None and result.error.code == "edit.not_unique"
    assert data == content
    assert lines in text_of(result)


async def test_replace_all(tmp_path: Path) -> None:
    result, data = await _edit(tmp_path, b"x = 1\nx = 1\n", "x = 1", "x = 2", replace_all=True)
    assert not result.is_error and data == b"x = 2\nx = 2\n"


async def test_not_found_shows_closest_region_with_visible_whitespace(tmp_path: Path) -> None:
    content = b"def a():\n    return 1\n\ndef b():\n\treturn  2\n"
    result, data = await _edit(tmp_path, content, "def b():\n    return 2", "x")
    assert result.error is not None and result.error.code == "edit.not_found"
    text = text_of(result)
    assert "closest region starts at line 4" in text
    assert "→return··2" in text
    assert data == content


async def test_multi_edit_is_all_or_nothing(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    runtime = make_runtime(tmp_path)
    await call_tool(runtime, "read_file", {"path": "f.txt"})
    edits = [{"old_string": "one", "new_string": "1"}, {"old_string": "three", "new_string": "3"}]
    result = await call_tool(runtime, "multi_edit", {"path": "f.txt", "edits": edits})
    assert result.error is not None and result.error.code == "edit.not_found"
    assert "edit 2:" in text_of(result)
    assert (tmp_path / "f.txt").read_text() == "one\ntwo\n"
