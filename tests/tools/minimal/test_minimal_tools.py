"""The minimal surface's read, write and edit: absolute paths, their own answers."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import call_tool, make_runtime, text_of


async def test_minimal_surface_adapters(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    target = tmp_path / "m.txt"
    rel = await call_tool(runtime, "read", {"path": "m.txt"}, surface="minimal")
    assert rel.error is not None and rel.error.code == "invalid_argument"
    wrote = await call_tool(
        runtime, "write", {"path": str(target), "content": "a\nb\n"}, surface="minimal"
    )
    assert text_of(wrote) == f"wrote 4 bytes to {target}"
    read = await call_tool(runtime, "read", {"path": str(target)}, surface="minimal")
    assert text_of(read) == "a\nb"
    edited = await call_tool(
        runtime,
        "edit",
        {"path": str(target), "old_string": "b", "new_string": "c"},
        surface="minimal",
    )
    assert text_of(edited) == f"edited {target} (1 replacement)"
    assert target.read_text() == "a\nc\n"
    fuzzy = await call_tool(
        runtime,
        "edit",
        {"path": str(target), "old_string": "c ", "new_string": "d"},
        surface="minimal",
    )
    assert fuzzy.error is not None and fuzzy.error.code == "edit.not_found"
