"""`toolhost acp` between the official ACP SDK (editor side) and the SCRIPTED TEST AGENT
(SDK-built): reads, writes, terminals and permissions served through the runtime."""

from __future__ import annotations

from pathlib import Path

from tests.acp.harness import audit_lines, run_editor, scripted_agent, toolhost_acp


def test_read_edit_and_run_go_through_toolhost(node: Path, ws: Path) -> None:
    notes = str(ws / "notes.md")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "read", "path": notes},
                {"op": "read", "path": notes, "line": 2, "limit": 2},
                {"op": "write", "path": notes, "content": "# Notes\n\nline three, edited\n"},
                {"op": "terminal", "command": "cat notes.md && echo ran"},
            ]
        ],
        permissions=["allow_once"],
    )
    results = run.results()
    assert [list(r) for r in results] == [["ok"]] * 4, run.events
    assert results[0]["ok"] == {"content": "# Notes\n\nline three\n"}
    assert results[1]["ok"] == {"content": "\nline three\n"}
    terminal = results[3]["ok"]
    assert terminal["exit"] == {"exitCode": 0, "signal": None}
    assert "line three, edited\nran" in terminal["output"]["output"]
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three, edited\n"
    # initialize: the agent was told the client serves files and terminals
    caps = run.reports()[0]["clientCapabilities"]
    assert caps["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert caps["terminal"] is True
    # toolhost's audit log has each of them, in the ACP session
    session = run.of("session")[0]["result"]["sessionId"]
    tools = [(line["tool"], line["session"]) for line in audit_lines()]
    assert ("acp_read_text_file", session) in tools
    assert ("write", session) in tools
    assert ("bash", session) in tools
