"""write_file's answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import call_tool, make_runtime, text_of


@pytest.mark.parametrize(
    ("content", "lines"),
    [("hi", "1 line"), ("a\nb", "2 lines"), ("a\nb\n", "2 lines"), ("", "0 lines")],
)
async def test_a_new_file_s_lines_are_counted_as_an_editor_counts_them(
    tmp_path: Path, content: str, lines: str
) -> None:
    """A last line without its newline is a line ("hi" was "(new file, 0 lines)")."""
    runtime = make_runtime(tmp_path, mode="bypass")
    wrote = await call_tool(runtime, "write_file", {"path": "new.txt", "content": content})
    assert text_of(wrote) == f"wrote {len(content)} bytes to new.txt (new file, {lines})"
