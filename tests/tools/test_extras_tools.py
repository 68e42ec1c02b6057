"""The extra tools through the real runtime (dispatch, observations, publishing, status)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import attrs

from lsp_server.core.client import NoClient
from lsp_server.runtime.dispatch import Runtime
from tests.helpers import call_tool, make_runtime, text_of
from tests.notebook.test_notebook_engine import FIXTURE, assert_only_cell_changed


def error_code(result: Any) -> str | None:
    return result.error.code if result.error else None


def notebook_workspace(tmp_path: Path) -> tuple[Path, Runtime]:
    root = tmp_path / "ws"
    root.mkdir()
    shutil.copyfile(FIXTURE, root / "analysis.ipynb")
    return root, make_runtime(root)


async def test_notebook_edit_follows_the_observation_lifecycle(tmp_path: Path) -> None:
    root, runtime = notebook_workspace(tmp_path)
    notebook = root / "analysis.ipynb"
    before = notebook.read_text(encoding="utf-8")
    edit = {"path": "analysis.ipynb", "cell_id": "plot", "new_source": "df.plot()"}
    unread = await call_tool(runtime, "notebook_edit", edit)
    assert error_code(unread) == "FS_NOT_OBSERVED"
    assert notebook.read_text(encoding="utf-8") == before

    await call_tool(runtime, "read_file", {"path": "analysis.ipynb", "limit": 5})
    result = await call_tool(runtime, "notebook_edit", edit)
    assert not result.is_error, text_of(result)
    assert text_of(result) == (
        "edited analysis.ipynb: replaced cell 3 (code, id plot) (outputs cleared); "
        "the notebook now has 8 cell(s)"
    )
    after = notebook.read_text(encoding="utf-8")
    assert_only_cell_changed(before, after, 3)

    # Our own write refreshed the observation: a second edit needs no re-read.
    insert = {
        "path": "analysis.ipynb",
        "edit_mode": "insert",
        "cell_number": 8,
        "new_source": "## Appendix",
        "cell_type": "markdown",
    }
    appended = await call_tool(runtime, "notebook_edit", insert)
    assert not appended.is_error, text_of(appended)
    assert json.loads(notebook.read_text(encoding="utf-8"))["cells"][8]["source"] == ["## Appendix"]

    # Someone else changes the file: the next edit is refused as stale.
    notebook.write_text(notebook.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    stale = await call_tool(
        runtime,
        "notebook_edit",
        {"path": "analysis.ipynb", "edit_mode": "delete", "cell_number": 0},
    )
    assert error_code(stale) == "FS_STALE_VERSION"


async def test_notebook_edit_refuses_other_files_and_bad_cells(tmp_path: Path) -> None:
    root, runtime = notebook_workspace(tmp_path)
    (root / "notes.txt").write_text("x\n")
    await call_tool(runtime, "read_file", {"path": "notes.txt"})
    wrong = await call_tool(
        runtime, "notebook_edit", {"path": "notes.txt", "cell_number": 0, "new_source": "y"}
    )
    assert error_code(wrong) == "edit.invalid"
    await call_tool(runtime, "read_file", {"path": "analysis.ipynb"})
    missing = await call_tool(
        runtime, "notebook_edit", {"path": "analysis.ipynb", "cell_id": "nope", "new_source": "y"}
    )
    assert error_code(missing) == "edit.not_found"
    assert "intro-md" in text_of(missing)


async def test_web_fetch_through_the_runtime(fence: Any, site: str, tmp_path: Path) -> None:
    allowed = make_runtime(tmp_path, {"web": {"allowLoopback": True}})
    page = await call_tool(allowed, "web_fetch", {"url": f"{site}/page.html"})
    assert not page.is_error and "# Release 2.0" in text_of(page)
    missing = await call_tool(allowed, "web_fetch", {"url": f"{site}/nothing"})
    assert error_code(missing) == "web.http_status"
    assert "HTTP 404" in text_of(missing) and "Not here" in text_of(missing)
    capped = make_runtime(tmp_path, {"web": {"allowLoopback": True, "maxBytes": 1000}})
    big = await call_tool(capped, "web_fetch", {"url": f"{site}/big", "max_bytes": 5000})
    assert "first 1000 bytes, truncated" in text_of(big)
    default = make_runtime(tmp_path)
    refused = await call_tool(default, "web_fetch", {"url": f"{site}/page.html"})
    assert error_code(refused) == "web.blocked_address"
    assert fence.connects and all(address[0] == "127.0.0.1" for address in fence.connects)


async def test_agent_state_tools_and_status(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    todos = {
        "todos": [
            {"content": "read the spec", "status": "completed"},
            {"content": "write the code", "status": "in_progress"},
        ]
    }
    result = await call_tool(runtime, "todo_write", todos)
    assert text_of(result).startswith("Todo list (2 items: 0 pending, 1 in progress, 1 completed)")
    created = await call_tool(runtime, "create_goal", {"objective": "release 1.0"})
    assert text_of(created).startswith("created goal goal-1 (revision 1): active")
    again = await call_tool(runtime, "create_goal", {"objective": "other"})
    assert error_code(again) == "goal.unfinished_exists"
    stale = await call_tool(
        runtime, "update_goal", {"goal_id": "goal-1", "revision": 2, "action": "pause"}
    )
    assert error_code(stale) == "goal.revision_conflict"
    no_reason = await call_tool(
        runtime, "update_goal", {"goal_id": "goal-1", "revision": 1, "action": "blocked"}
    )
    assert error_code(no_reason) == "invalid_argument"
    blocked = await call_tool(
        runtime,
        "update_goal",
        {"goal_id": "goal-1", "revision": 1, "action": "blocked", "blocked_reason": "CI is red"},
    )
    assert "blocked: CI is red" in text_of(blocked)
    shown = await call_tool(runtime, "get_goal", {})
    assert text_of(shown).startswith("goal goal-1 (revision 2): blocked")
    status = runtime.sessions.get("default").status()
    assert status["goal"]["status"] == "blocked"
    assert status["todos"]["counts"] == {"pending": 0, "in_progress": 1, "completed": 1}
    # Sessions are independent.
    other = await call_tool(runtime, "get_goal", {}, session="other")
    assert text_of(other).startswith("no goal in this session")


async def test_present_checks_files_and_notifies_the_client(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "out").mkdir(parents=True)
    (root / "out" / "report.md").write_text("# Report\n")
    (root / "out" / "data.csv").write_text("a,b\n")
    os.symlink(root / "out" / "report.md", root / "link.md")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    runtime = make_runtime(root)
    files = [{"path": "out/report.md", "description": "the report"}, {"path": "out/data.csv"}]
    result = await call_tool(runtime, "present", {"files": files})
    assert text_of(result) == ("presented 2 file(s):\n- out/report.md — the report\n- out/data.csv")
    assert isinstance(runtime.client, NoClient)
    method, params = runtime.client.notifications[-1]
    assert method == "toolhost/present"
    assert attrs.asdict(params) == {
        "session": "default",
        "files": [
            {
                "path": "out/report.md",
                "uri": (root / "out" / "report.md").resolve().as_uri(),
                "description": "the report",
            },
            {
                "path": "out/data.csv",
                "uri": (root / "out" / "data.csv").resolve().as_uri(),
                "description": None,
            },
        ],
    }
    assert runtime.sessions.get("default").status()["presented"]["declarations"] == 1

    for path, code in [
        ("link.md", "FS_NOT_A_FILE"),
        ("out", "FS_NOT_A_FILE"),
        ("out/missing.md", "FS_NOT_FOUND"),
        (str(outside), "workspace.outside_scope"),
    ]:
        refused = await call_tool(runtime, "present", {"files": [{"path": path}]})
        assert error_code(refused) == code, (path, text_of(refused))
    twice = await call_tool(
        runtime, "present", {"files": [{"path": "out/data.csv"}, {"path": "./out/data.csv"}]}
    )
    assert error_code(twice) == "invalid_argument"
    for count in (0, 9):
        many = await call_tool(runtime, "present", {"files": [{"path": "out/data.csv"}] * count})
        assert error_code(many) == "schema_mismatch"
    assert len(runtime.client.notifications) == 1
