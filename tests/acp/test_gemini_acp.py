"""Gemini CLI 0.61.0 (`gemini --experimental-acp`) behind `toolhost acp`.

With fs declared, Gemini CLI's `replace` and `write_file` read and write through the client
(fs/*) for files inside the session's cwd; its `read_file`, `run_shell_command`, `glob`,
`grep_search` and `list_directory` use its own file system and shell (they bypass the
client), and it never uses terminal/*. Its `write_file` of a NEW file fails through any
client that answers a missing file with an error: it recognises "does not exist" only on an
Error object, and the ACP library it bundles rejects with a plain error object. The test
shows each of these."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp.harness import audit_lines
from tests.acp.real_agents import run_agent
from tests.agents.model_wire import say, tool

pytestmark = [pytest.mark.real_client, pytest.mark.slow]  # a real agent CLI


def test_gemini_edits_through_toolhost_and_reads_and_runs_on_its_own(
    node: Path, ws: Path, tmp_path: Path
) -> None:
    (ws / "other.md").write_text("only read_file reads this\n", encoding="utf-8")
    notes = str(ws / "notes.md")
    script = [
        tool("read_file", file_path="other.md"),
        tool("replace", file_path="notes.md", old_string="three", new_string="3", instruction="x"),
        tool("run_shell_command", command="cat notes.md", description="show it"),
        tool("write_file", file_path="new.md", content="new\n"),
        say("done"),
    ]
    editor, agent = run_agent(
        node, "gemini", ws, tmp_path / "run", script, "edit notes.md", permissions=["allow_once"]
    )
    assert editor.of("prompt")[0].get("result", {}).get("stopReason") == "end_turn", (
        agent.describe()
    )
    session = editor.of("session")[0]["result"]["sessionId"]
    lines = [line for line in audit_lines() if line["session"] == session]
    results = agent.results
    # read_file: Gemini's own read; toolhost never saw other.md
    assert "only read_file reads this" in results[0]
    assert not [line for line in audit_lines() if any("other.md" in p for p in line["paths"])]
    # replace: read and written through toolhost, asked with the diff
    assert ("acp_read_text_file", "ok") in [(line["tool"], line["outcome"]) for line in lines]
    assert [line["outcome"] for line in lines if line["tool"] == "write"] == ["ok"]
    asked = [event for event in editor.of("permission") if event["fromToolhost"]]
    assert asked[0]["params"]["toolCall"]["content"] == [
        {
            "type": "diff",
            "path": notes,
            "oldText": "# Notes\n\nline three\n",
            "newText": "# Notes\n\nline 3\n",
        }
    ]
    assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"
    # run_shell_command: Gemini's own shell
    assert "line 3" in results[2]
    assert "bash" not in [line["tool"] for line in audit_lines()]
    # write_file of a new file: Gemini cannot tell toolhost's FS_NOT_FOUND from a failure
    assert "FS_NOT_FOUND" in results[3]
    assert not (ws / "new.md").exists()
