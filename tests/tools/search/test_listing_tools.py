"""glob and ls through the runtime: caps with their truncation lines, files and folders."""

from __future__ import annotations

from pathlib import Path

from lsp_server.protocol import CallResult
from lsp_server.runtime.dispatch import Runtime
from tests.helpers import call_tool, make_runtime, text_of


def full_text(runtime: Runtime, result: CallResult) -> str:
    """The whole text of a result, paged back from the session's store when it was cut."""
    if result.meta.result_ref is None:
        return text_of(result)
    store = runtime.sessions.get("default").results
    pieces: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = store.page(result.meta.result_ref, offset, 1 << 20)
        pieces.append(page.text)
        offset = page.next_offset
    return "".join(pieces)


async def test_glob_caps_at_1000_with_a_count(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "many").mkdir(parents=True)
    for i in range(1003):
        (root / "many" / f"f{i:04}.txt").write_text("x")
    runtime = make_runtime(root)
    result = await call_tool(runtime, "glob", {"pattern": "**/*.txt"})
    rows = full_text(runtime, result).splitlines()
    assert len(rows) == 1001
    assert rows[-1] == "[showing the 1000 newest of 1003 matching files; narrow the pattern]"
    none = text_of(await call_tool(make_runtime(root), "glob", {"pattern": "**/*.rs"}))
    assert none == "(no matches)"


async def test_glob_refuses_patterns_that_climb_out(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for pattern in ("../*.txt", "/etc/*"):
        result = await call_tool(make_runtime(root), "glob", {"pattern": pattern})
        assert result.is_error and result.error is not None
        assert result.error.code == "invalid_argument"


async def test_ls_caps_at_5000_with_a_count(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(5004):
        (root / f"f{i:05}").write_text("")
    runtime = make_runtime(root)
    result = await call_tool(runtime, "ls", {})
    assert result.meta.truncated  # 5000 rows are more than the output contract shows
    rows = full_text(runtime, result).splitlines()
    assert rows[0] == "f00000\t0"
    assert len(rows) == 5001
    assert rows[-1] == (
        "[... entries 1-5000 of 5004 shown, in name order; offset=5000 lists the next ones, "
        "or list a subfolder, lower depth, or use glob]"
    )
    rest = text_of(await call_tool(runtime, "ls", {"offset": 5000})).splitlines()
    assert rest == [
        "f05000\t0",
        "f05001\t0",
        "f05002\t0",
        "f05003\t0",
        "[... entries 5001-5004 of 5004 shown, in name order; "
        "or list a subfolder, lower depth, or use glob]",
    ]
    past = text_of(await call_tool(runtime, "ls", {"offset": 6000}))
    assert past == "[nothing past offset 6000: 5004 entries in all]"


async def test_ls_of_a_file_and_an_empty_folder(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "empty").mkdir(parents=True)
    (root / "a.txt").write_text("abc")
    runtime = make_runtime(root)
    assert text_of(await call_tool(runtime, "ls", {"path": "a.txt"})) == "a.txt\t3"
    assert text_of(await call_tool(runtime, "ls", {"path": "empty"})) == "(empty folder)"
    assert text_of(await call_tool(runtime, "ls", {"depth": 2})) == "a.txt\t3\nempty/"
