"""What an agent trips over: paths after `cd`, and truncated text that names the way to
the rest."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import call_tool, make_runtime, text_of


async def test_paths_stay_workspace_relative_after_cd(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    runtime = make_runtime(root)
    moved = await call_tool(runtime, "bash", {"command": "cd pkg && pwd"})
    assert text_of(moved).startswith(str(root / "pkg"))
    written = await call_tool(runtime, "write_file", {"path": "pkg/new.py", "content": "x = 1\n"})
    assert not written.is_error, text_of(written)
    assert (root / "pkg" / "new.py").read_text() == "x = 1\n"
    assert not (root / "pkg" / "pkg").exists()
    read = await call_tool(runtime, "read_file", {"path": "pkg/new.py"})
    assert "x = 1" in text_of(read)
