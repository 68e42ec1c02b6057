"""Inputs the call fuzz turned into internal errors (issue 27) are refusals with a stable
code: a NUL byte in a shell command (bash cannot take one; the full and the minimal
surface alike), and a `symbol` of 100k-1M characters for the lsp_* tools (it went on to
the code index and to rg's argument list)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_server.protocol import CallParams
from tests.helpers import make_runtime


@pytest.mark.parametrize("surface", ["full", "minimal"])
async def test_a_nul_byte_in_a_command_is_refused(tmp_path: Path, surface: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    runtime = make_runtime(root)
    params = CallParams(
        name="bash", arguments={"command": "echo a\x00b"}, session=surface, surface=surface
    )
    result = await runtime.call(params)
    assert result.is_error and result.error is not None
    assert result.error.code == "invalid_argument", result.content
    assert "NUL" in result.content[0]["text"]


@pytest.mark.parametrize("tool", ["lsp_hover", "lsp_references", "lsp_definition"])
@pytest.mark.parametrize("size", [100_000, 1_000_000])
async def test_a_huge_symbol_is_refused(tmp_path: Path, tool: str, size: int) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "x.py").write_text("def f():\n    pass\n")
    runtime = make_runtime(root, long_lived=True)
    for arguments in ({"symbol": "a" * size}, {"symbol": "a" * size, "path": "x.py", "line": 1}):
        result = await runtime.call(CallParams(name=tool, arguments=arguments, session="s"))
        assert result.is_error and result.error is not None
        assert result.error.code == "invalid_argument", result.content
        assert len(result.content[0]["text"]) < 2000
