"""Refusals that need no language server: bad positions, a symbol alone, unknown files."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import call_tool, text_of
from tests.langservers.conftest import copy_fixture, lsp_runtime


async def test_refusals_before_any_server_starts(tmp_path: Path) -> None:
    root = copy_fixture("python", tmp_path)
    (root / "notes.unknownext").write_text("make_circle\n")
    runtime = lsp_runtime(root)
    cases = [
        ({"path": "main.py", "line": 8, "symbol": "not_there"}, "invalid_argument", "main.py:8"),
        ({"path": "main.py", "line": 99, "symbol": "x"}, "invalid_argument", "has 10 lines"),
        ({"symbol": "no_such_name_anywhere"}, "invalid_argument", "no definition named"),
        ({"path": "main.py", "symbol": "make_circle"}, "invalid_argument", "`line` is missing"),
        (
            {"path": "notes.unknownext", "line": 1, "symbol": "make_circle"},
            "lsp.unavailable",
            "no language server is known",
        ),
    ]
    for arguments, code, fragment in cases:
        result = await call_tool(runtime, "lsp_definition", arguments)
        assert result.error is not None and result.error.code == code, text_of(result)
        assert fragment in text_of(result)


async def test_the_file_argument_is_path_like_every_tool(tmp_path: Path) -> None:
    """`path`, as read_file and every other tool name it; the old `file` is refused before
    anything runs, and the refusal lists `path` among the allowed properties."""
    root = copy_fixture("python", tmp_path)
    runtime = lsp_runtime(root)
    for name in ("lsp_definition", "lsp_references", "lsp_hover", "lsp_diagnostics"):
        tool = runtime.registry.get(name)
        assert tool is not None
        assert [arg.name for arg in tool.contract.path_args] == ["path"]
        assert "file" not in tool.contract.schema["properties"]
        result = await call_tool(runtime, name, {"file": "main.py", "line": 8, "symbol": "x"})
        assert result.error is not None and result.error.code == "schema_mismatch", name
        violation = next(line for line in text_of(result).splitlines() if "/file " in line)
        assert "no such property; allowed:" in violation and "path" in violation.split(": ")[-1]
