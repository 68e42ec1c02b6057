"""delete_range's guards: a cut block, anchors backwards or not unique."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import call_tool, make_runtime, text_of


async def test_delete_range_guards(tmp_path: Path) -> None:
    source = 'int a() {\n  return 1;\n}\nint b() {\n  // }\n  return "{";\n}\n'
    (tmp_path / "f.c").write_text(source)
    runtime = make_runtime(tmp_path)
    await call_tool(runtime, "read_file", {"path": "f.c"})
    half = await call_tool(
        runtime,
        "delete_range",
        {"path": "f.c", "start_anchor": "int a() {", "end_anchor": "  return 1;"},
    )
    assert half.error is not None and "cut a {...} block" in text_of(half)
    backwards = await call_tool(
        runtime,
        "delete_range",
        {"path": "f.c", "start_anchor": "int b() {", "end_anchor": "int a() {"},
    )
    assert backwards.error is not None and backwards.error.code == "edit.invalid"
    dup = await call_tool(
        runtime, "delete_range", {"path": "f.c", "start_anchor": "}", "end_anchor": "}"}
    )
    assert dup.error is not None and dup.error.code == "edit.not_unique"
    whole = await call_tool(
        runtime,
        "delete_range",
        {"path": "f.c", "start_anchor": "int b() {", "end_anchor": '  return "{";'},
    )
    assert whole.error is not None  # cuts the block: its closing brace stays behind
    ok = await call_tool(
        runtime,
        "delete_range",
        {"path": "f.c", "start_anchor": "int a() {", "end_anchor": "int b() {"},
    )
    assert ok.error is not None  # opens b's block without closing it
    body = await call_tool(
        runtime,
        "delete_range",
        {"path": "f.c", "start_anchor": "  // }", "end_anchor": '  return "{";'},
    )
    assert not body.is_error, text_of(body)
    assert (tmp_path / "f.c").read_text() == "int a() {\n  return 1;\n}\nint b() {\n}\n"
    assert "-  // }" in text_of(body)
