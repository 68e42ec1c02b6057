"""Every tool's MCP annotations (from its contract entry) hold when the tool is called.

Each tool runs through the runtime (tests.helpers.make_runtime) in a scenario of its own,
and what its hints claim is checked against what the call did to the workspace files and
to the state the session shows (its todo list, goal, presented files, background jobs):
- readOnlyHint: nothing of that changes; a tool that changes_state may change the
  session's own todo list, goal and presented files (not the workspace, which is the
  environment the hints speak of), and nothing else;
- destructiveHint false ("only additive updates"): nothing that existed is removed or
  overwritten;
- idempotentHint: a second call with the same arguments succeeds (no refusal) and leaves
  everything as the first one left it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from PIL import Image

from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.sessions.session_state import GoalTracker, PresentedFiles, TodoList
from lsp_server.shell.jobs import JobManager
from lsp_server.tools.registry import build_registry
from tests.helpers import call_tool, fixed_page, loopback_http, text_of
from tests.langservers.conftest import copy_fixture, lsp_runtime, require_server, stop_servers

Setup = Callable[[Runtime, Path], Awaitable[dict[str, Any]]]


async def nothing(runtime: Runtime, root: Path) -> dict[str, Any]:
    return {}


def read_first(path: str) -> Setup:
    async def setup(runtime: Runtime, root: Path) -> dict[str, Any]:
        result = await call_tool(runtime, "read_file", {"path": path})
        assert not result.is_error, text_of(result)
        return {}

    return setup


async def a_goal(runtime: Runtime, root: Path) -> dict[str, Any]:
    result = await call_tool(runtime, "create_goal", {"objective": "make circles round"})
    assert not result.is_error, text_of(result)
    return {}


async def a_running_job(runtime: Runtime, root: Path) -> dict[str, Any]:
    result = await call_tool(runtime, "bash", {"command": "sleep 60", "run_in_background": True})
    assert not result.is_error, text_of(result)
    jobs = runtime.services.get(JobManager).jobs()
    assert jobs, text_of(result)
    return {"job_id": jobs[-1].id}


@attrs.frozen
class Scenario:
    arguments: dict[str, Any]
    setup: Setup = nothing


NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "id": "c1",
            "metadata": {},
            "source": "x = 1",
            "outputs": [],
            "execution_count": None,
        }
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}

SCENARIOS: dict[tuple[str, str], Scenario] = {
    ("full", "bash"): Scenario({"command": "echo made > made.txt"}),
    ("full", "code_index"): Scenario({"action": "search", "query": "make_circle"}),
    ("full", "create_goal"): Scenario({"objective": "make circles round"}),
    ("full", "delete_range"): Scenario(
        {"path": "notes.txt", "start_anchor": "first", "end_anchor": "second"},
        read_first("notes.txt"),
    ),
    ("full", "delete_symbol"): Scenario(
        {"path": "shapes.c", "name": "area_of"}, read_first("shapes.c")
    ),
    ("full", "edit_file"): Scenario(
        {"path": "main.c", "old_string": "1.0", "new_string": "2.0"}, read_first("main.c")
    ),
    ("full", "get_goal"): Scenario({}, a_goal),
    ("full", "glob"): Scenario({"pattern": "*.c"}),
    ("full", "grep"): Scenario({"pattern": "make_circle"}),
    ("full", "job_input"): Scenario(
        {"job_id": "{job_id}", "text": "typed\n", "wait_ms": 200}, a_running_job
    ),
    ("full", "job_kill"): Scenario({"job_id": "{job_id}"}, a_running_job),
    ("full", "job_output"): Scenario({"job_id": "{job_id}"}, a_running_job),
    ("full", "ls"): Scenario({"path": "."}),
    ("full", "lsp_definition"): Scenario({"path": "main.c", "line": 6, "symbol": "make_circle"}),
    ("full", "lsp_diagnostics"): Scenario({"path": "main.c"}),
    ("full", "lsp_hover"): Scenario({"path": "main.c", "line": 6, "symbol": "make_circle"}),
    ("full", "lsp_references"): Scenario({"path": "main.c", "line": 6, "symbol": "make_circle"}),
    ("full", "move_file"): Scenario(
        {"source_path": "main.c", "destination_path": "moved.c"}, read_first("main.c")
    ),
    ("full", "multi_edit"): Scenario(
        {"path": "main.c", "edits": [{"old_string": "1.0", "new_string": "2.0"}]},
        read_first("main.c"),
    ),
    ("full", "notebook_edit"): Scenario(
        {"path": "book.ipynb", "cell_id": "c1", "edit_mode": "delete"}, read_first("book.ipynb")
    ),
    ("full", "present"): Scenario({"files": [{"path": "main.c", "description": "the program"}]}),
    ("full", "read_file"): Scenario({"path": "main.c"}),
    ("full", "todo_write"): Scenario({"todos": [{"content": "round", "status": "pending"}]}),
    ("full", "update_goal"): Scenario(
        {"goal_id": "goal-1", "revision": 1, "action": "edit", "objective": "squares"}, a_goal
    ),
    ("full", "use_capability"): Scenario(
        {
            "action": "call",
            "id": "tool:edit_file",
            "arguments": {"path": "main.c", "old_string": "1.0", "new_string": "2.0"},
        },
        read_first("main.c"),
    ),
    ("full", "view_image"): Scenario({"path": "dot.png"}),
    ("full", "web_fetch"): Scenario({"url": "{page}"}),
    ("full", "write_file"): Scenario(
        {"path": "main.c", "content": "int main(void) { return 0; }\n"}, read_first("main.c")
    ),
    ("minimal", "bash"): Scenario({"command": "echo made > made.txt"}),
    ("minimal", "edit"): Scenario(
        {"path": "{root}/main.c", "old_string": "1.0", "new_string": "2.0"},
        read_first("main.c"),
    ),
    ("minimal", "grep"): Scenario({"pattern": "make_circle", "path": "{root}"}),
    ("minimal", "read"): Scenario({"path": "{root}/main.c"}),
    ("minimal", "write"): Scenario(
        {"path": "{root}/main.c", "content": "int main(void) { return 0; }\n"},
        read_first("main.c"),
    ),
}


def every_tool() -> list[tuple[str, str]]:
    registry = build_registry()
    return [(surface, name) for surface in ("full", "minimal") for name in registry.names(surface)]


def test_every_tool_has_a_scenario() -> None:
    assert sorted(SCENARIOS) == sorted(every_tool())


def derived(path: Path) -> bool:
    """Not content: git's own folder, and the index clangd (the real language server the
    lsp_* tools ask, as an editor's clangd would) keeps in `.cache/clangd` with its own
    .gitignore."""
    return path.parts[0] == ".git" or path.parts[:2] == (".cache", "clangd")


def state_of(runtime: Runtime, root: Path) -> dict[str, Any]:
    """The workspace's files and what the session shows of its own state."""
    files = {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not derived(path.relative_to(root))
    }
    session = runtime.sessions.get("default")
    goal = session.extension(GoalTracker).goal
    return {
        "files": files,
        "todos": session.extension(TodoList).render(),
        "goal": goal.render() if goal else None,
        "presented": [f.path for f in session.extension(PresentedFiles).files],
        "jobs": {job.id: job.status for job in runtime.services.get(JobManager).jobs()},
    }


SESSION_OWN = ("todos", "goal", "presented")
"""What a changes_state tool may change and still be read-only: the session's own state."""


def kept(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What existed before and is gone or different after (an additive change loses none)."""
    lost = [
        f"file {name}" for name, data in before["files"].items() if after["files"].get(name) != data
    ]
    for key in ("todos", "goal"):
        if before[key] and before[key] != after[key]:
            lost.append(key)
    lost += [f"presented {p}" for p in before["presented"] if p not in after["presented"]]
    lost += [f"job {j}" for j, s in before["jobs"].items() if after["jobs"].get(j) != s]
    return lost


def workspace(tmp_path: Path) -> Path:
    root = copy_fixture("c", tmp_path)
    (root / ".git").mkdir()
    (root / "book.ipynb").write_text(json.dumps(NOTEBOOK))
    (root / "notes.txt").write_text("first\nsecond\nthird\n")
    image = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(image, "PNG")
    (root / "dot.png").write_bytes(image.getvalue())
    return root


def fill(arguments: Any, values: dict[str, str]) -> Any:
    if isinstance(arguments, dict):
        return {key: fill(value, values) for key, value in arguments.items()}
    if isinstance(arguments, list):
        return [fill(value, values) for value in arguments]
    if isinstance(arguments, str):
        for key, value in values.items():
            arguments = arguments.replace("{" + key + "}", value)
        return arguments
    return arguments


@pytest.mark.parametrize(
    ("surface", "name"), [pytest.param(*key, id="/".join(key)) for key in every_tool()]
)
async def test_the_hints_hold(surface: str, name: str, tmp_path: Path) -> None:
    root = workspace(tmp_path)
    if name.startswith("lsp_"):
        require_server("c", root)
    tool = build_registry().get(name, surface)  # type: ignore[arg-type]
    assert tool is not None
    hints = tool.contract.annotations()
    scenario = SCENARIOS[(surface, name)]
    runtime = lsp_runtime(root, {"web": {"allowLoopback": True}})
    try:
        with loopback_http(fixed_page(b"<p>a page</p>", "text/html")) as page:
            values = {"root": str(root), "page": page, **await scenario.setup(runtime, root)}
            arguments = fill(scenario.arguments, values)
            before = state_of(runtime, root)
            first = await call_tool(runtime, name, arguments, surface=surface)
            assert not first.is_error, text_of(first)
            after = state_of(runtime, root)
            own = SESSION_OWN if tool.contract.hints.changes_state else ()
            if hints["readOnlyHint"]:
                changed = [k for k in before if k not in own and before[k] != after[k]]
                changed += sorted(set(before["files"]) ^ set(after["files"]))
                assert changed == [], f"{name} says readOnlyHint but changed {changed}"
            if not hints["destructiveHint"]:
                lost = [what for what in kept(before, after) if what.split()[0] not in own]
                assert lost == [], f"{name} says only additive updates"
            if hints["idempotentHint"]:
                second = await call_tool(runtime, name, arguments, surface=surface)
                assert not second.is_error, f"{name} says idempotentHint: " + text_of(second)
                assert state_of(runtime, root) == after, f"{name}: a repeat changed more"
    finally:
        for job in runtime.services.get(JobManager).jobs():
            await runtime.services.get(JobManager).kill(job, "test over")
        await stop_servers(runtime)
