"""session/new gets toolhost's MCP server (on by default, --no-mcp turns it off); the MCP
server attaches to the proxy's runtime, so its writes ask in the same editor."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.acp.harness import audit_lines, run_editor, scripted_agent, toolhost_acp

pytestmark = pytest.mark.slow


def test_session_new_gets_the_mcp_server_attached_to_this_runtime(node: Path, ws: Path) -> None:
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {
                    "op": "mcp",
                    "calls": [
                        {"tool": "read_file", "arguments": {"path": "notes.md"}},
                        {
                            "tool": "write_file",
                            "arguments": {"path": "made-over-mcp.md", "content": "hi\n"},
                        },
                    ],
                }
            ]
        ],
        permissions=["deny"],
    )
    report = run.reports()[0]
    (server,) = report["mcpServers"]
    assert server["name"] == "toolhost"
    assert server["command"] == sys.executable
    assert server["args"][:3] == ["-m", "lsp_server", "mcp"]
    assert str(ws) in server["args"]
    read, write = report["results"][0]["ok"]
    assert "line three" in read["content"][0]["text"]
    assert read["_meta"]["toolhost"]["runtime"].startswith("editor (pid")  # attached
    # the MCP write asked in the ACP editor, under the ACP session, and was denied there
    (asked,) = run.of("permission")
    assert asked["params"]["sessionId"] == run.of("session")[0]["result"]["sessionId"]
    made = str(ws / "made-over-mcp.md")
    diff = {"type": "diff", "path": made, "oldText": None, "newText": "hi\n"}
    assert asked["params"]["toolCall"]["content"] == [diff]
    assert write["isError"] is True
    assert write["structuredContent"]["code"] == "permission.user_denied"
    assert not (ws / "made-over-mcp.md").exists()
    sessions = {line["session"] for line in audit_lines() if line["tool"] == "read_file"}
    assert sessions == {"mcp:scripted-test-agent"}


def test_no_mcp_leaves_the_servers_alone(node: Path, ws: Path) -> None:
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node), options=("--no-mcp",)),
        ws,
        [[{"op": "read", "path": str(ws / "notes.md")}]],
    )
    assert run.reports()[0]["mcpServers"] == []


def test_the_setting_turns_it_off(node: Path, ws: Path) -> None:
    (ws / ".toolhost.toml").write_text("[acp]\nmcp_server = false\n", encoding="utf-8")
    run = run_editor(node, toolhost_acp(*scripted_agent(node)), ws, [[]])
    assert run.reports()[0]["mcpServers"] == []
