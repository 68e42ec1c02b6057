"""codex-acp 0.16.0 (Codex through its ACP adapter) behind `toolhost acp`.

codex-acp sends the client nothing of fs/* or terminal/*: Codex runs its own commands in its
own sandbox and applies its own patches (its source asks the client only for permissions,
and shows command output in a display-only terminal when the client's `_meta` asks for it).
What reaches toolhost is toolhost's MCP server, which `toolhost acp` adds to session/new:
its calls run in the proxy's runtime and ask in the same editor. The test shows both."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp.harness import audit_lines
from tests.acp.real_agents import run_agent
from tests.agents.model_wire import say, tool

pytestmark = [pytest.mark.real_client, pytest.mark.slow]  # a real agent CLI


def test_codex_runs_its_own_commands_and_edits_through_toolhosts_mcp(
    node: Path, ws: Path, tmp_path: Path
) -> None:
    script = [
        tool("exec_command", cmd="cat notes.md"),
        tool("exec_command", cmd="echo from-codex > codex.txt"),
        tool("mcp__toolhost__read_file", path="notes.md"),
        tool("mcp__toolhost__edit_file", path="notes.md", old_string="three", new_string="3"),
        tool("mcp__toolhost__edit_file", path="notes.md", old_string="3", new_string="denied"),
        say("done"),
    ]
    editor, agent = run_agent(
        node,
        "codex-acp",
        ws,
        tmp_path / "run",
        script,
        "edit notes.md",
        permissions=["allow_once", "deny"],
    )
    assert editor.of("prompt")[0].get("result", {}).get("stopReason") == "end_turn", (
        agent.describe()
    )
    results = agent.results
    # Codex's own shell: it ran (in Codex's read-only sandbox), toolhost never saw it
    assert "line three" in results[0]
    assert "Read-only file system" in results[1]
    assert not (ws / "codex.txt").exists()
    tools = [line["tool"] for line in audit_lines()]
    assert "bash" not in tools and "acp_read_text_file" not in tools and "write" not in tools
    # toolhost's MCP server: the edit asked in the editor with its diff, the second was denied
    lines = [line for line in audit_lines() if line["session"].startswith("mcp:")]
    assert [(line["tool"], line["outcome"]) for line in lines] == [
        ("read_file", "ok"),
        ("edit_file", "ok"),
        ("edit_file", "permission.user_denied"),
    ]
    asked = [event for event in editor.of("permission") if event["fromToolhost"]]
    assert len(asked) == 2
    shown = asked[0]["params"]["toolCall"]["content"][0]["content"]["text"]
    assert "-line three" in shown and "+line 3" in shown
    assert "permission.user_denied" in results[4]
    assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"
