"""The grep tool through the real runtime (in-process dispatch): parity with `rg` run
directly, secrets, errors, truncation totals and the engine choice."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from lsp_server.search import ripgrep
from lsp_server.search.query import SearchQuery
from tests.helpers import call_tool, make_runtime, text_of
from tests.search.parity_cases import CASE_IDS, CASES, rg_direct


def grep_args(pattern: str, args: dict[str, Any]) -> dict[str, Any]:
    call: dict[str, Any] = {"pattern": pattern, "max_results": 10_000}
    if "mode" in args:
        call["output_mode"] = args["mode"]
    for key in ("include", "ignore_case", "context", "multiline"):
        if key in args:
            call[key] = args[key]
    return call


@pytest.mark.parametrize(("pattern", "args"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_grep_tool_equals_rg(
    tree: Path, rg_path: Path, engine: str, pattern: str, args: dict[str, Any]
) -> None:
    runtime = make_runtime(tree, {"search": {"engine": engine}})
    result = await call_tool(runtime, "grep", grep_args(pattern, args))
    assert not result.is_error, result.error
    assert text_of(result) == rg_direct(rg_path, tree, pattern, args)


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_secret_files_never_listed(tree: Path, rg_path: Path, engine: str) -> None:
    (tree / "notes").mkdir()
    (tree / "notes" / "ssh.key").write_text("hello secret\n")
    (tree / ".ssh").mkdir()
    (tree / ".ssh" / "config").write_text("hello ssh\n")
    runtime = make_runtime(tree, {"search": {"engine": engine}})
    for args in (
        {"pattern": "hello", "include": "*.key"},
        {"pattern": "hello", "include": "*", "output_mode": "files_with_matches"},
        {"pattern": "BEGIN", "include": "**/*.pem"},
        {"pattern": "HELLO", "include": ".env"},
    ):
        text = text_of(await call_tool(runtime, "grep", args))
        for secret in (".key", ".pem", "id_rsa", ".env", ".ssh"):
            assert secret not in text.replace("config.env.example", ""), (args, text)
    listing = text_of(await call_tool(runtime, "glob", {"pattern": "**/*"}))
    listing += text_of(await call_tool(runtime, "glob", {"pattern": "**/.*"}))
    listing += text_of(await call_tool(runtime, "ls", {"recursive": True}))
    for secret in ("ssh.key", "server.pem", "api.key", "id_rsa", ".env\t", ".ssh/"):
        assert secret not in listing, secret


async def test_allowed_secret_is_searchable(tree: Path, rg_path: Path) -> None:
    runtime = make_runtime(tree, {"workspace": {"allowedSecrets": ["secrets/api.key"]}})
    text = text_of(await call_tool(runtime, "grep", {"pattern": "hello secret"}))
    assert text == "secrets/api.key:1:hello secret key"


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
@pytest.mark.parametrize(
    ("pattern", "fragment"),
    [("foo(", "unclosed group"), ("a(?=b)", "look-around"), ("[z-a]", "")],
)
async def test_invalid_regex_is_a_clear_error(
    tree: Path, rg_path: Path, engine: str, pattern: str, fragment: str
) -> None:
    runtime = make_runtime(tree, {"search": {"engine": engine}})
    result = await call_tool(runtime, "grep", {"pattern": pattern})
    assert result.is_error
    assert result.error is not None
    assert result.error.code == "grep.invalid_regex"
    if engine == "ripgrep":
        assert fragment in result.error.message
    else:
        assert "position" in result.error.message


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_max_results_keeps_true_totals(tmp_path: Path, rg_path: Path, engine: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(5):
        (root / f"f{i}.txt").write_text("match\n" * 100)
    runtime = make_runtime(root, {"search": {"engine": engine}})
    text = text_of(await call_tool(runtime, "grep", {"pattern": "match", "max_results": 150}))
    rows = text.splitlines()
    assert rows[:100] == [f"f0.txt:{n}:match" for n in range(1, 101)]
    assert rows[149] == "f1.txt:50:match"
    assert rows[150].startswith("[showing 150 of 500 matching lines in 5 files")
    counts = text_of(
        await call_tool(
            runtime, "grep", {"pattern": "match", "output_mode": "count", "max_results": 2}
        )
    )
    assert counts.splitlines()[:2] == ["f0.txt:100", "f1.txt:100"]
    assert "[showing 2 of 5 files (500 matching lines in all)" in counts


async def test_long_lines_are_cut(tmp_path: Path, rg_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "min.js").write_text("var a=1;" * 1000 + "\n")
    for engine in ("ripgrep", "python"):
        runtime = make_runtime(root, {"search": {"engine": engine}})
        text = text_of(await call_tool(runtime, "grep", {"pattern": "var a"}))
        prefix = "min.js:1:"
        assert text.startswith(prefix + "var a=1;")
        how = "read_file offset=0 limit=1 shows the line"
        marker = f" [... 7650 chars of this line left out: {how} ...] "
        assert text == prefix + "var a=1;" * 25 + marker + ("var a=1;" * 1000)[-150:]


async def test_search_in_a_subfolder_and_a_file(tree: Path, rg_path: Path) -> None:
    runtime = make_runtime(tree)
    text = text_of(await call_tool(runtime, "grep", {"pattern": "hello", "path": "src"}))
    assert text.splitlines() == [
        "src/app.py:5:    print('hello', value)",
        "src/nested/deep.py:2:    return 'hello deep'",
        "src/nested/deep.py:7:hello = 3",
        "src/nested/top_only.txt:1:hello top only nested is kept",
    ]
    text = text_of(await call_tool(runtime, "grep", {"pattern": "def", "path": "src/app.py"}))
    assert text == "src/app.py:3:def main():\nsrc/app.py:9:def compute(n):"
    none = text_of(await call_tool(runtime, "grep", {"pattern": "zzz-nothing"}))
    assert none == "(no matches)"


async def test_timeout_returns_partial_results_with_a_note(tmp_path: Path, rg_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(300):
        (root / f"f{i:03}.txt").write_text("needle\n" + "hay\n" * 2000)
    runtime = make_runtime(root, {"search": {"engine": "python"}})
    # A budget far too small for 300 files: the engine stops and says so.
    text = text_of(
        await call_tool(runtime, "grep", {"pattern": "needle", "timeout_seconds": 0.000001})
    )
    assert "[stopped after 1e-06 s: partial" in text
    assert "(no matches)" not in text


async def test_minimal_grep(tree: Path, rg_path: Path) -> None:
    runtime = make_runtime(tree, {"search": {"maxResults": 2}})
    result = await call_tool(
        runtime, "grep", {"pattern": "hello", "path": str(tree / "src")}, surface="minimal"
    )
    assert text_of(result).splitlines() == [
        f"{tree}/src/app.py:5:     print('hello', value)",
        f"{tree}/src/nested/deep.py:2:     return 'hello deep'",
        "(truncated at 2 matches)",
    ]
    relative = await call_tool(
        runtime, "grep", {"pattern": "hello", "path": "src"}, surface="minimal"
    )
    assert relative.is_error
    assert relative.error is not None and relative.error.code == "invalid_argument"


async def test_a_fifo_is_refused_not_waited_for(tmp_path: Path, rg_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    os.mkfifo(root / "pipe")
    (root / "a.txt").write_text("hello\n")
    runtime = make_runtime(root)
    result = await call_tool(runtime, "grep", {"pattern": "hello", "path": "pipe"})
    assert result.is_error and result.error is not None
    assert result.error.code == "FS_NOT_A_FILE"
    # In a folder walk both engines skip it (only regular files are searched).
    for engine in ("ripgrep", "python"):
        runtime = make_runtime(root, {"search": {"engine": engine}})
        text = text_of(await call_tool(runtime, "grep", {"pattern": "hello"}))
        assert text == "a.txt:1:hello"


async def test_ripgrep_engine_timeout_keeps_what_it_found(tmp_path: Path, rg_path: Path) -> None:
    # rg blocks reading a FIFO nobody writes to: the deadline must end it.
    os.mkfifo(tmp_path / "pipe")
    query = SearchQuery("x", target=tmp_path / "pipe", ignore_base=tmp_path, timeout_seconds=0.5)
    outcome = await ripgrep.search(rg_path, query)
    assert outcome.timed_out
    assert outcome.files == []


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
@pytest.mark.parametrize("include", ["a{b", "a[b", "a}b"])
async def test_a_bad_include_glob_is_invalid_argument(
    tree: Path, rg_path: Path, engine: str, include: str
) -> None:
    runtime = make_runtime(tree, {"search": {"engine": engine}})
    result = await call_tool(runtime, "grep", {"pattern": "hello", "include": include})
    assert result.is_error and result.error is not None
    assert result.error.code == "invalid_argument"
    assert f"error parsing glob '{include}'" in result.error.message
