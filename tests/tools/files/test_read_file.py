"""read_file's own behaviour: its window and numbering, trailers, encodings and refusals (the
other tests that call read_file do so to set up what they check)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import call_tool, make_runtime, text_of


async def test_window_numbering_and_partial_trailer(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    runtime = make_runtime(tmp_path)
    result = await call_tool(runtime, "read_file", {"path": "f.txt", "offset": 2, "limit": 3})
    assert text_of(result).splitlines() == [
        "     3→l3",
        "     4→l4",
        "     5→l5",
        "[PARTIAL view: lines 3-5 of 10; pass offset=5 to continue]",
    ]


async def test_empty_past_end_long_lines_and_encoding(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "long.txt").write_text("x" * 5000 + "\n")
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    runtime = make_runtime(tmp_path)
    assert text_of(await call_tool(runtime, "read_file", {"path": "empty.txt"})) == "(empty file)"
    past = await call_tool(runtime, "read_file", {"path": "long.txt", "offset": 9})
    assert "the file has 1 lines" in text_of(past)
    long = text_of(await call_tool(runtime, "read_file", {"path": "long.txt"}))
    # 5000 chars: the first 1200 and the last 800 shown, the rest stored and named.
    assert "1→" + "x" * 1200 + " [... 3000 chars of this line left out; result_ref " in long
    assert long.splitlines()[0].endswith(" ...] " + "x" * 800)
    assert "[encoding: utf-8 with BOM]" in text_of(
        await call_tool(runtime, "read_file", {"path": "bom.txt"})
    )


async def test_refusals(tmp_path: Path) -> None:
    (tmp_path / "bin.dat").write_bytes(b"\x89PNG\x00\x00data")
    (tmp_path / "folder").mkdir()
    runtime = make_runtime(tmp_path)
    codes = {}
    for path in ("bin.dat", "folder", "missing.txt"):
        result = await call_tool(runtime, "read_file", {"path": path})
        assert result.error is not None
        codes[path] = result.error.code
    assert codes == {
        "bin.dat": "FS_BINARY",
        "folder": "FS_IS_DIRECTORY",
        "missing.txt": "FS_NOT_FOUND",
    }


async def test_line_numbers_hold_across_the_kept_prefixes(tmp_path: Path) -> None:
    """Windows before, across and past the prefixes made once (NUMBERS_KEPT lines), and
    a width of 7 digits, number every line as "%6d→" / "%7d→" would."""
    (tmp_path / "f.txt").write_text("".join(f"l{i}\n" for i in range(1, 1_000_011)))
    runtime = make_runtime(tmp_path, {"limits": {"maxFileBytes": 64 * 1024 * 1024}})
    for offset, limit in [(0, 3), (1998, 4), (9_998, 4), (0, 1), (999_997, 20), (1, 2)]:
        arguments = {"path": "f.txt", "offset": offset, "limit": limit}
        rows = text_of(await call_tool(runtime, "read_file", arguments)).splitlines()[:-1]
        end = min(offset + limit, 1_000_010)
        width = max(6, len(str(end)))
        assert rows == [f"{n:>{width}}→l{n}" for n in range(offset + 1, end + 1)], arguments


@pytest.mark.parametrize(
    "text",
    ["café\n", "Grüße aus München\n", "naïve résumé — “quoted”\n", "total = 50€\n"],
)
async def test_a_short_western_file_is_read_as_cp1252(tmp_path: Path, text: str) -> None:
    """A few accented letters are too little for charset detection ("café" in Latin-1
    was read as cp1006, Urdu: "cafﻠ"); the model sees the text, and an edit writes the
    same code page back."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "legacy.txt").write_bytes(text.encode("cp1252"))
    runtime = make_runtime(root)
    shown = text_of(await call_tool(runtime, "read_file", {"path": "legacy.txt"}))
    assert text.strip() in shown and "[encoding: cp1252]" in shown, shown
    edit = {"path": "legacy.txt", "old_string": text.strip(), "new_string": "déjà vu"}
    result = await call_tool(runtime, "edit_file", edit)
    assert not result.is_error, text_of(result)
    assert (root / "legacy.txt").read_bytes() == "déjà vu\n".encode("cp1252")


@pytest.mark.parametrize(
    ("text", "encoding", "edited"),
    [
        ("Привет, мир\n", "cp1251", "Пока, мир"),  # was cp1125: "╧ЁштхҐ, ьшЁ"
        ("// Комментарий\n", "koi8_r", "// Ответ"),  # was cp1252: "// ëÏÍÍÅÎÔÁÒÉÊ"
        ("Γειά σου κόσμε\n", "cp1253", "Αντίο"),  # was cp1251: "ГейЬ упх кьуме"
    ],
)
async def test_a_short_cyrillic_or_greek_file_is_read_in_its_code_page(
    tmp_path: Path, text: str, encoding: str, edited: str
) -> None:
    """A few words are too little for charset detection; the reading with no symbol where
    a letter belongs and no "рТЙЧЕФ" (capitals inside a word) wins. An edit in the same
    script then writes the file's own code page, not a neighbour's."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "legacy.txt").write_bytes(text.encode(encoding))
    runtime = make_runtime(root)
    shown = text_of(await call_tool(runtime, "read_file", {"path": "legacy.txt"}))
    assert text.strip() in shown and f"[encoding: {encoding}]" in shown, shown
    edit = {"path": "legacy.txt", "old_string": text.strip(), "new_string": edited}
    result = await call_tool(runtime, "edit_file", edit)
    assert not result.is_error, text_of(result)
    assert (root / "legacy.txt").read_bytes() == f"{edited}\n".encode(encoding)
