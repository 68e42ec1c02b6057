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
        ({"file": "main.py", "line": 8, "symbol": "not_there"}, "invalid_argument", "main.py:8"),
        ({"file": "main.py", "line": 99, "symbol": "x"}, "invalid_argument", "has 10 lines"),
        ({"symbol": "no_such_name_anywhere"}, "invalid_argument", "no definition named"),
        ({"file": "main.py", "symbol": "make_circle"}, "invalid_argument", "`line` is missing"),
        (
            {"file": "notes.unknownext", "line": 1, "symbol": "make_circle"},
            "lsp.unavailable",
            "no language server is known",
        ),
    ]
    for arguments, code, fragment in cases:
        result = await call_tool(runtime, "lsp_definition", arguments)
        assert result.error is not None and result.error.code == code, text_of(result)
        assert fragment in text_of(result)
