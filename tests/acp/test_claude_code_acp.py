"""claude-code-acp 0.16.2 (Claude Code through its ACP adapter) behind `toolhost acp`, the
official SDK as the editor, the scripted model on loopback in a network namespace.

With fs and terminal declared (toolhost declares them), claude-code-acp replaces Claude
Code's Read with mcp__acp__Read (fs/read_text_file), Write and Edit with mcp__acp__Write and
mcp__acp__Edit (an Edit is a read and a write through the client), Bash with mcp__acp__Bash
(terminal/*). Grep, Glob and the rest stay Claude Code's own: they bypass the client, as the
Grep step below shows (it reaches the model, and toolhost never sees it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp.harness import REPO, audit_lines
from tests.acp.real_agents import run_agent
from tests.agents.model_wire import say, tool

pytestmark = [pytest.mark.real_client, pytest.mark.slow]  # a real agent CLI

AGENT = "claude-code-acp"


def _bash(command: str) -> dict[str, Any]:
    return tool("mcp__acp__Bash", command=command, description="run it", timeout=60000)


def _session_lines(session: str) -> list[dict[str, Any]]:
    return [line for line in audit_lines() if line["session"] == session]


def test_reads_edits_and_runs_through_toolhost(node: Path, ws: Path, tmp_path: Path) -> None:
    notes, secret = str(ws / "notes.md"), str(ws / ".env")
    outside = Path("/var/tmp") / f"toolhost-acp-claude-{tmp_path.name}"
    script = [
        tool("mcp__acp__Read", file_path=notes),
        tool("mcp__acp__Edit", file_path=notes, old_string="line three", new_string="edited"),
        _bash("echo made > made.txt && cat notes.md"),
        _bash(f"echo x > {outside}"),
        tool("mcp__acp__Read", file_path=secret),
        tool("Grep", pattern="edited", path=str(ws), output_mode="content"),
        say("done"),
    ]
    editor, agent = run_agent(
        node, AGENT, ws, tmp_path / "run", script, "edit notes.md", permissions=["allow_once"]
    )
    assert editor.of("prompt") == [{"event": "prompt", "result": {"stopReason": "end_turn"}}], (
        agent.describe()
    )
    session = editor.of("session")[0]["result"]["sessionId"]
    # on disk
    assert (ws / "notes.md").read_text() == "# Notes\n\nedited\n"
    assert (ws / "made.txt").read_text() == "made\n"
    assert not outside.exists()
    # toolhost's audit log, in the ACP session: reads, the write, both commands, the refusal
    lines = _session_lines(session)
    outcomes = [(line["tool"], line["outcome"]) for line in lines]
    assert outcomes.count(("acp_read_text_file", "ok")) >= 2  # the Read, and the Edit's read
    assert ("write", "ok") in outcomes
    assert outcomes.count(("bash", "ok")) == 2
    assert ("acp_read_text_file", "workspace.secret_file") in outcomes
    # toolhost asked the editor with the diff; Claude Code's own prompts passed through too
    ours = [event for event in editor.of("permission") if event["fromToolhost"]]
    assert [event["params"]["toolCall"]["content"] for event in ours] == [
        [
            {
                "type": "diff",
                "path": notes,
                "oldText": "# Notes\n\nline three\n",
                "newText": "# Notes\n\nedited\n",
            }
        ]
    ]
    assert any(not event["fromToolhost"] for event in editor.of("permission"))
    # what the model read back
    results = "\n".join(agent.results)
    assert "# Notes\n\nedited" in agent.results[2]  # the command's output, via terminal/output
    assert "Read-only file system" in results  # the sandbox
    assert "workspace.secret_file" in results and "do-not-leak" not in results
    # Grep is Claude Code's own: the model got its answer, toolhost saw no grep at all
    assert "notes.md" in agent.results[-1]
    assert not [line for line in audit_lines() if "grep" in line["tool"]]
    # the command's checkpoint reverts
    first_bash = next(line["callId"] for line in lines if line["tool"] == "bash")
    reverted = subprocess.run(
        [sys.executable, "-m", "lsp_server", "revert", first_bash, "--root", str(ws)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    assert not (ws / "made.txt").exists()


def test_a_stale_write_is_refused_then_a_denied_one_changes_nothing(
    node: Path, ws: Path, tmp_path: Path
) -> None:
    notes = str(ws / "notes.md")
    script = [
        tool("mcp__acp__Read", file_path=notes),
        _bash("echo appended >> notes.md"),
        tool("mcp__acp__Write", file_path=notes, content="stale write\n"),
        tool("mcp__acp__Read", file_path=notes),
        tool("mcp__acp__Write", file_path=notes, content="after the re-read\n"),
        tool("mcp__acp__Write", file_path=notes, content="denied\n"),
        say("done"),
    ]
    editor, agent = run_agent(
        node,
        AGENT,
        ws,
        tmp_path / "run",
        script,
        "rewrite notes.md",
        permissions=["allow_once", "deny"],
    )
    assert editor.of("prompt")[0].get("result") == {"stopReason": "end_turn"}, agent.describe()
    session = editor.of("session")[0]["result"]["sessionId"]
    writes = [line["outcome"] for line in _session_lines(session) if line["tool"] == "write"]
    assert writes == ["FS_STALE_VERSION", "ok", "permission.user_denied"]
    results = agent.results
    assert "FS_STALE_VERSION" in results[2]
    assert "appended" in results[3]
    assert "permission.user_denied" in results[5]
    assert (ws / "notes.md").read_text() == "after the re-read\n"
