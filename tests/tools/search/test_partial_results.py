"""A search that hits its time limit answers with what it found and says it stopped:
"stopped after N s: partial", never "(no matches)" (glob, grep on both engines, ls)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import call_tool, make_runtime, text_of
from tests.tools.search.test_listing_tools import full_text

STOPPED = "[stopped after 1e-06 s: partial"


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for folder in range(60):
        (root / f"d{folder:02}").mkdir(parents=True)
        for n in range(60):
            (root / f"d{folder:02}" / f"f{n:02}.txt").write_text("needle\n" + "hay\n" * 50)
    return root


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_glob_stopped_by_its_limit(wide: Path, rg_path: Path, engine: str) -> None:
    runtime = make_runtime(wide, {"search": {"engine": engine}})
    args = {"pattern": "**/*.txt", "timeout_seconds": 0.000001}
    # Paged back in full: rows listed before the stop can be more than one page.
    text = full_text(runtime, await call_tool(runtime, "glob", args))
    rows = text.splitlines()
    assert rows[-1].startswith(STOPPED), text
    assert "(no matches)" not in text
    assert all(row.endswith(".txt") for row in rows[:-1])
    whole = text_of(await call_tool(runtime, "glob", {"pattern": "**/*.txt"}))
    assert "stopped after" not in whole and "of 3600 matching files" in whole


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_grep_stopped_by_its_limit(wide: Path, rg_path: Path, engine: str) -> None:
    runtime = make_runtime(wide, {"search": {"engine": engine}})
    for pattern in ("needle", "absent-word"):
        args = {"pattern": pattern, "timeout_seconds": 0.000001}
        text = full_text(runtime, await call_tool(runtime, "grep", args))
        assert text.splitlines()[-1].startswith(STOPPED), text
        assert "(no matches)" not in text


async def test_ls_stopped_by_its_limit(wide: Path) -> None:
    runtime = make_runtime(wide)
    args = {"recursive": True, "timeout_seconds": 0.000001}
    text = full_text(runtime, await call_tool(runtime, "ls", args))
    assert text.splitlines()[-1].startswith(STOPPED), text
    assert "(empty folder)" not in text
    whole = full_text(runtime, await call_tool(runtime, "ls", {"recursive": True}))
    assert "stopped after" not in whole and len(whole.splitlines()) == 3660
