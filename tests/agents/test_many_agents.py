"""Three real agents at once in one workspace, each beside its scripted model in a network
namespace of its own: Claude Code and Codex through `toolhost mcp` (a toolhost process each,
on one folder), Gemini CLI through `toolhost acp`. They edit lines of one shared file and
run commands at the same time. Every change lands, each is in exactly one checkpoint, of the
agent that made it or marked as shared, and reverting all of one agent's calls leaves the
others' changes byte for byte.

Not attached to an editor here (the issue's setting): attaching changes which toolhost
process runs the calls, not how checkpoints attribute them; tests/nvim/test_mcp_attach.py
covers the attach path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.acp.harness import node_folder
from tests.acp.real_agents import run_agent
from tests.agents.agent_configs import AGENTS
from tests.agents.model_wire import say, tool, tool_results

pytestmark = [pytest.mark.real_client, pytest.mark.slow, pytest.mark.timeout(900)]

SHARED = "a = 1\nb = 2\nc = 3\n"
ALLOW = ("read_file", "edit_file", "bash")


def mcp_script(agent: Any, line: str, file: str) -> list[dict[str, object]]:
    name = line.split(" = ")[0]
    return [
        tool(agent.tool("read_file"), path="shared.py"),
        tool(agent.tool("edit_file"), path="shared.py", old_string=line, new_string=f"{name} = 0"),
        tool(agent.tool("bash"), command=f"echo {agent.name} > {file}"),
        say("done"),
    ]


def toolhost(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "lsp_server", *args, "--root", str(root)]
    return subprocess.run(command, capture_output=True, text=True, check=False, env=os.environ)


def test_three_agents_at_once_keep_their_work_apart(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "shared.py").write_text(SHARED, encoding="utf-8")
    claude = AGENTS["claude"](tmp_path / "claude", root)
    codex = AGENTS["codex"](tmp_path / "codex", root)
    node = node_folder(tmp_path)
    gemini_script = [
        tool(
            "replace",
            file_path="shared.py",
            old_string="c = 3",
            new_string="c = 0",
            instruction="x",
        ),
        say("done"),
    ]

    with ThreadPoolExecutor(3) as pool:
        runs = [
            pool.submit(
                claude.run,
                "Set a to 0.",
                mcp_script(claude, "a = 1", "claude.txt"),
                approvals="client",
                allow=ALLOW,
            ),
            pool.submit(
                codex.run,
                "Set b to 0.",
                mcp_script(codex, "b = 2", "codex.txt"),
                approvals="client",
                allow=ALLOW,
            ),
            pool.submit(
                run_agent,
                node,
                "gemini",
                root,
                tmp_path / "gemini",
                gemini_script,
                "Set c to 0.",
                permissions=["allow_once"],
            ),
        ]
        claude_run, codex_run, (editor, gemini_run) = (run.result() for run in runs)
    assert claude_run.returncode == 0, claude_run.describe()
    assert codex_run.returncode == 0, codex_run.describe()
    assert editor.of("prompt")[0].get("result", {}).get("stopReason") == "end_turn", (
        gemini_run.describe()
    )

    # No edit that returned success is lost: each agent's line changed, in one file. (On a
    # failure: the tools' results each MCP agent's model was last sent.)
    results = {
        name: tool_results(run.turns[-1]) if run.turns else []
        for name, run in (("claude", claude_run), ("codex", codex_run))
    }
    assert (root / "shared.py").read_text() == "a = 0\nb = 0\nc = 0\n", results
    assert (root / "claude.txt").read_text() == "claude\n"
    assert (root / "codex.txt").read_text() == "codex\n"

    listed = json.loads(toolhost(root, "checkpoints", "--json", "--limit", "100").stdout)
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for checkpoint in listed["checkpoints"]:
        by_agent.setdefault(checkpoint.get("agent") or "?", []).append(checkpoint)
    assert len(by_agent) == 3 and {"claude-code", codex.client_name} <= set(by_agent), by_agent
    # Each change is in its agent's checkpoint: the created files once each, and shared.py
    # once per agent (each agent's own edit). When the two commands (two toolhost processes)
    # ran at once, the one that ended first may hold the other's file too, marked: no one
    # was known to have made it yet (its revert leaves it as the other's: docs/AGENTS.md).
    made = [(f["change"], f["path"]) for c in listed["checkpoints"] for f in c["files"]]
    created = made.count(("created", "claude.txt")) + made.count(("created", "codex.txt"))
    # (The tool results say why a command has no checkpoint: its result names the reason.)
    read = f"Claude Code read: {claude_run.results}\nCodex read: {codex_run.results}"
    assert created in (2, 3), f"{made}\n{read}"
    assert made.count(("modified", "shared.py")) == 3, made
    codex_files = {f["path"] for c in by_agent[codex.client_name] for f in c["files"]}
    claude_files = {f["path"] for c in by_agent["claude-code"] for f in c["files"]}
    assert {"shared.py", "codex.txt"} <= codex_files and "claude.txt" in claude_files, (
        f"{by_agent}\n{read}"
    )

    # Reverting all of Codex's calls leaves Claude Code's and Gemini's changes as they are.
    [codex_session] = {c["session"] for c in by_agent[codex.client_name]}
    undone = toolhost(root, "revert", "--session", codex_session, "--json")
    result = json.loads(undone.stdout)
    assert "shared.py" in result["reverted"], result
    assert (root / "shared.py").read_text() == "a = 0\nb = 2\nc = 0\n"
    assert (root / "claude.txt").read_text() == "claude\n"
    held = {c["path"]: c["reason"] for c in result["conflicts"]}
    if "codex.txt" in held:  # both commands ran at once: it asks, naming Claude Code's
        assert "claude" in held["codex.txt"], held
    else:
        assert not (root / "codex.txt").exists(), result


def test_claude_codes_git_checkout_asks_before_dropping_codexs_edit(tmp_path: Path) -> None:
    """The git guard across agents: Codex edits a tracked file; Claude Code's `git checkout
    -- .` would drop that edit, so it asks (Claude Code in -p cannot show the form) and the
    text the model reads names Codex's session and the file; the edit stays."""
    root = tmp_path / "project"
    root.mkdir()
    for args in (("init", "-q"), ("config", "user.email", "t@example.com")):
        subprocess.run(["git", *args], cwd=root, check=True)
    subprocess.run(["git", "config", "user.name", "t"], cwd=root, check=True)
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    subprocess.run(["git", "add", "a.txt"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "a"], cwd=root, check=True)
    codex = AGENTS["codex"](tmp_path / "codex", root)
    claude = AGENTS["claude"](tmp_path / "claude", root)
    edit = [
        tool(codex.tool("read_file"), path="a.txt"),
        tool(codex.tool("edit_file"), path="a.txt", old_string="a", new_string="a by codex"),
        say("done"),
    ]
    run = codex.run("Edit a.txt.", edit, approvals="client", allow=ALLOW)
    assert run.returncode == 0, run.describe()
    assert (root / "a.txt").read_text() == "a by codex\n"

    checkout = [tool(claude.tool("bash"), command="git checkout -- ."), say("done")]
    run = claude.run("Discard the changes.", checkout, approvals="client", allow=ALLOW)
    assert run.returncode == 0, run.describe()
    [result] = run.results[:1]
    assert "mcp:codex" in result and "a.txt" in result, result
    assert (root / "a.txt").read_text() == "a by codex\n"
