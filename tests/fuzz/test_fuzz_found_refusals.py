"""Inputs the call fuzz turned into internal errors (issue 27) are refusals with a stable
code: a NUL byte in a shell command (bash cannot take one; the full and the minimal
surface alike), and a `symbol` of 100k-1M characters for the lsp_* tools (it went on to
the code index and to rg's argument list)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_server.protocol import CallParams
from tests.helpers import as_json, call_tool, make_runtime


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


@pytest.mark.parametrize("sandbox", ["default", "off"])
async def test_a_command_over_the_argument_limit_runs(tmp_path: Path, sandbox: str) -> None:
    """Linux refuses one argument of 128 KiB or more ("Argument list too long" from bwrap
    was an internal_error): a long command goes to bash through a file, and runs."""
    root = tmp_path / "ws"
    root.mkdir()
    runtime = make_runtime(root)
    for size in (200_000, 3_000_000):
        command = "x=" + "y" * size + "; echo ${#x}"
        arguments = {"command": command, "sandbox": sandbox}
        result = as_json(await call_tool(runtime, "bash", arguments))
        assert not result["isError"], result["content"]
        assert result["content"][0]["text"].startswith(f"{size}\n"), result["content"]
    started = as_json(
        await call_tool(
            runtime,
            "bash",
            {"command": "echo " + "z" * 200_000 + " | wc -c", "run_in_background": True},
        )
    )
    assert not started["isError"], started["content"]
    job = as_json(await call_tool(runtime, "job_output", {"job_id": "bash-1", "wait": True}))
    assert "200001" in job["content"][0]["text"], job["content"]


async def test_a_huge_code_index_query_and_grep_pattern_are_refused(tmp_path: Path) -> None:
    """They went to rg's argument list (internal_error, "Argument list too long"); a 1 MB
    glob took 15 s to compile, past any timeout_seconds."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "x.py").write_text("def f():\n    pass\n")
    runtime = make_runtime(root)
    cases = [
        ("code_index", {"action": "search", "query": "a" * 1_000_000}, "at most 1000"),
        ("grep", {"pattern": "a" * 1_000_000}, "at most 65536"),
        ("grep", {"pattern": "é" * 40_000}, "80000 bytes"),
        ("grep", {"pattern": "f", "include": "*" * 200_000}, "the include is"),
        ("glob", {"pattern": "y" * 1_000_000}, "glob takes at most 65536"),
    ]
    for name, arguments, said in cases:
        result = as_json(await call_tool(runtime, name, arguments))
        assert result["isError"] and result["error"]["code"] == "invalid_argument", result
        assert said in result["content"][0]["text"], result["content"]
        assert len(result["content"][0]["text"]) < 1000
    near = as_json(await call_tool(runtime, "grep", {"pattern": "x?" * 30_000 + "pass"}))
    assert "x.py:2:" in near["content"][0]["text"], near["content"]


def _deep_folder(root: Path, levels: int) -> str:
    """Folders of 200-character names, `levels` deep (past PATH_MAX from about 20), made
    through descriptors; returns the deepest one's path relative to `root`."""
    name = "d" * 200
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        made = os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(made, b"needle\n")
        os.close(made)
    finally:
        os.close(fd)
    return "/".join([name] * levels)


async def test_past_path_max_glob_grep_and_ls_name_the_folder_they_could_not_open(
    tmp_path: Path,
) -> None:
    """They answered "(no matches)" for a file that exists."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "near.txt").write_text("needle\n")
    _deep_folder(root, 25)
    runtime = make_runtime(root)
    for name, arguments in (
        ("glob", {"pattern": "**/deep.txt"}),
        ("grep", {"pattern": "needle"}),
        ("grep", {"pattern": "needle", "output_mode": "files_with_matches"}),
    ):
        result = as_json(await call_tool(runtime, name, arguments))
        text = result["content"][0]["text"]
        assert not result["isError"], text
        assert "[not searched, could not be opened: dddd" in text, text
        assert "too long" in text.lower() and "characters)" in text, text
        assert "search from a folder deeper down" in text, text
        assert len(text) < 2000
    listed = as_json(await call_tool(runtime, "ls", {"recursive": True, "depth": 30}))
    text = listed["content"][0]["text"]
    assert "near.txt" in text and "[not listed, could not be opened: dddd" in text, text
    assert "list from a folder deeper down" in text, text
    engine = make_runtime(root, {"search": {"engine": "python"}})
    python = as_json(await call_tool(engine, "grep", {"pattern": "needle"}))
    assert "near.txt:1:needle" in python["content"][0]["text"]
    assert "[not searched, could not be opened: dddd" in python["content"][0]["text"]
