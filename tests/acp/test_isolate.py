"""`toolhost acp --isolate`: each new ACP session works in a git worktree of the live tree
(HEAD plus the uncommitted changes), through the agent's fs/* requests and toolhost's MCP
server alike, and its change comes back through workspace:apply. The official ACP SDK is
the editor; the agent is the SCRIPTED TEST AGENT (SDK-built, not a real agent)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.acp.harness import run_editor, scripted_agent, toolhost_acp
from tests.acp.test_bad_input import RawEditor

pytestmark = pytest.mark.slow


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "notes.md").write_text("# Notes\n\nline three\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    (root / "notes.md").write_text("# Notes\n\nline three, not committed\n")
    (root / "untracked.md").write_text("not in HEAD\n")
    return root


def test_an_isolated_session_works_in_a_worktree_and_applies_its_change(
    node: Path, tmp_path: Path
) -> None:
    root = repository(tmp_path)
    use = {"action": "call", "id": "workspace:apply", "arguments": {}}
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node), options=("--isolate",)),
        root,
        [
            [
                {
                    "op": "mcp",
                    "calls": [
                        {"tool": "read_file", "arguments": {"path": "notes.md"}},
                        {"tool": "read_file", "arguments": {"path": "untracked.md"}},
                        {
                            "tool": "write_file",
                            "arguments": {"path": "made.md", "content": "by the agent\n"},
                        },
                    ],
                },
                {"op": "terminal", "command": "pwd"},
            ],
            [{"op": "mcp", "calls": [{"tool": "use_capability", "arguments": use}]}],
        ],
        permissions=["allow_once"] * 4,
    )
    first, second = run.reports()
    (server,) = first["mcpServers"]
    tree = Path(server["args"][server["args"].index("--root") + 1])
    assert tree != root and "toolhost-worktrees" in str(tree), server
    assert str(tree) in git(root, "worktree", "list")
    read, untracked, wrote = first["results"][0]["ok"]
    # The live tree, not HEAD: the uncommitted edit and the untracked file are there.
    assert "line three, not committed" in read["content"][0]["text"]
    assert "isolated: you work in" in read["content"][0]["text"]
    assert "not in HEAD" in untracked["content"][0]["text"]
    assert wrote["isError"] is False, wrote
    terminal = first["results"][1]["ok"]
    assert terminal["output"]["output"].strip() == str(tree)  # the session's cwd is there
    # Until it applies, nothing reached the user's folder.
    assert (tree / "made.md").read_text() == "by the agent\n"
    (applied,) = second["results"][0]["ok"]
    assert applied["isError"] is False, json.dumps(applied)
    assert (root / "made.md").read_text() == "by the agent\n"
    assert (root / "notes.md").read_text() == "# Notes\n\nline three, not committed\n"


def test_a_folder_outside_git_is_refused_with_a_reason(node: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    editor = RawEditor(toolhost_acp(*scripted_agent(node), options=("--isolate",)), tmp_path)
    try:
        init = {"protocolVersion": 1, "clientCapabilities": {}}
        editor.send({"id": 0, "method": "initialize", "params": init})
        editor.answer_to(0)
        params = {"cwd": str(plain), "mcpServers": []}
        editor.send({"id": 1, "method": "session/new", "params": params})
        answer = editor.answer_to(1)
    finally:
        assert editor.close() == 0
    error = answer["error"]
    assert error["data"]["code"] == "workspace.isolation_failed", error
    assert "not in a git repository with a commit" in error["message"]
    assert "without --isolate" in error["data"]["recovery"]
