"""One read-only label per tool, whichever face shows it.

`toolhost tools` (a subprocess, its JSON and its listing), the VS Code extension's
generated languageModelTools (package.json) and MCP's tools/list (a real `toolhost mcp`
subprocess) must agree for every tool, and all of them come from the contract entry's
hints. The session tools (todo list, goal, presented files) change only toolhost's own
record of the session, never the workspace: read-only everywhere. use_capability runs
other tools, writers too: a writer everywhere.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lsp_server.tools.registry import build_registry
from tests.mcp.clients import mcp_session, toolhost_command

REPO = Path(__file__).resolve().parents[2]
SESSION_STATE = ("create_goal", "present", "todo_write", "update_goal")


def toolhost(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [*toolhost_command(), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def listed_by_toolhost_tools(cwd: Path) -> tuple[dict[str, bool], dict[str, bool]]:
    """readOnly of `toolhost tools --json`, and the mark of the plain listing."""
    as_json = json.loads(toolhost("tools", "--surface", "full", "--json", cwd=cwd))
    by_json = {tool["name"]: tool["readOnly"] for tool in as_json}
    listing = toolhost("tools", "--surface", "full", cwd=cwd)
    by_line: dict[str, bool] = {}
    for line in listing.splitlines():
        words = line.split()
        if words and words[0] in by_json:
            by_line[words[0]] = "read-only" in line
    return by_json, by_line


def contributed_to_vscode() -> dict[str, bool]:
    package = json.loads((REPO / "extension/vscode/package.json").read_text(encoding="utf-8"))
    tools = package["contributes"]["languageModelTools"]
    return {t["name"].removeprefix("toolhost_"): "readOnly" in t["tags"] for t in tools}


async def test_every_face_labels_a_tool_alike(ws: Path) -> None:
    by_json, by_line = listed_by_toolhost_tools(ws)
    vscode = contributed_to_vscode()
    async with mcp_session(ws) as session:
        listed = (await session.list_tools()).tools
    mcp = {tool.name: tool.annotations for tool in listed}
    contract = {tool.name: tool.contract for tool in build_registry().surface("full")}

    assert sorted(by_json) == sorted(by_line) == sorted(vscode) == sorted(mcp) == sorted(contract)
    for name, entry in contract.items():
        hints = mcp[name]
        assert hints is not None, name
        labels = {
            "toolhost tools --json": by_json[name],
            "toolhost tools": by_line[name],
            "VS Code contribution": vscode[name],
            "MCP readOnlyHint": hints.read_only_hint,
        }
        assert set(labels.values()) == {entry.labelled_read_only}, (name, labels)
        if hints.read_only_hint:
            assert hints.destructive_hint is False, name

    for name in SESSION_STATE:
        assert by_json[name] and mcp[name].read_only_hint, name  # type: ignore[union-attr]
        assert not mcp[name].destructive_hint, name  # type: ignore[union-attr]
    assert not by_json["use_capability"]
    assert mcp["use_capability"].destructive_hint  # type: ignore[union-attr]
    assert not mcp["update_goal"].idempotent_hint  # type: ignore[union-attr]
