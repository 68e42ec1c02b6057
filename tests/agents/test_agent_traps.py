"""The traps docs/MCP.md warns about, each shown with the real agent: Claude Code's tool search
hides toolhost's tools from the first turn, Codex drops schema bounds (toolhost's own
validation enforces them), and which MCP protocol revision each agent speaks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.agents.agent_configs import AGENTS, Agent, ClaudeCode, Codex, claude_env
from tests.agents.agent_runs import agent_env
from tests.agents.model_servers import say, tool, tool_names, tool_schemas

pytestmark = [pytest.mark.real_client, pytest.mark.slow]


def test_claude_codes_tool_search_defers_toolhosts_tools(tmp_path: Path, project: Path) -> None:
    """Unless ENABLE_TOOL_SEARCH=false, Claude Code offers MCP tools behind its ToolSearch
    tool: the first turn names none of toolhost's tools."""
    agent = ClaudeCode(tmp_path / "agent", project)
    run = agent.run("Say hi.", [say("hi")], env={"ENABLE_TOOL_SEARCH": ""})
    assert run.returncode == 0, run.describe()
    names = tool_names(run.first_turn)
    assert "ToolSearch" in names, names
    assert not [name for name in names if name.startswith("mcp__toolhost__")], names


class ClaudeCodeAddedByCommand(ClaudeCode):
    """Claude Code with toolhost added as docs/MCP.md says: `claude mcp add --scope project
    toolhost -- <absolute toolhost> mcp ...` (run where only loopback exists, like the rest)."""

    def setup(
        self, program: str, prompt: str, home: Path, toolhost: list[str], allow: tuple[str, ...]
    ) -> tuple[list[str], dict[str, str]]:
        add = ["unshare", "-n", program, "mcp", "add", "--scope", "project", "toolhost"]
        env = agent_env({"HOME": str(home)} | claude_env())
        done = subprocess.run(
            [*add, "--", *toolhost], cwd=self.workspace, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        command = [program, "-p", prompt]
        command += ["--allowedTools", ",".join(self.tool(name) for name in allow)]
        return command, claude_env()


def test_claude_mcp_add_then_a_headless_session(tmp_path: Path, project: Path) -> None:
    """The documented `claude mcp add` line, with --approvals client after `--`, gives the
    session its tools and the edit lands."""
    agent = ClaudeCodeAddedByCommand(tmp_path / "agent", project)
    script = [
        tool("mcp__toolhost__read_file", path="app.py"),
        tool("mcp__toolhost__edit_file", path="app.py", old_string="x = 1", new_string="x = 2"),
        say("done"),
    ]
    run = agent.run("Set x to 2.", script, approvals="client", allow=("read_file", "edit_file"))
    assert run.returncode == 0, run.describe()
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["toolhost"]
    assert server["args"][-2:] == ["--approvals", "client"], server
    assert "edited app.py" in run.results[1], run.results
    assert (project / "app.py").read_text() == "x = 2\nprint(x)\n"


def test_codex_drops_schema_bounds_and_toolhost_enforces_them(
    tmp_path: Path, project: Path
) -> None:
    """Codex strips minimum/maximum/minLength before the model sees toolhost's schemas; a
    call out of bounds still reaches toolhost, which refuses it as schema_mismatch."""
    agent = Codex(tmp_path / "agent", project)
    script = [tool("mcp__toolhost__bash", command="echo hi", timeout_ms=0), say("ok")]
    run = agent.run("Echo hi.", script, allow=("bash",))
    assert run.returncode == 0, run.describe()
    seen = tool_schemas(run.first_turn)["mcp__toolhost__bash"]["properties"]
    assert "minimum" not in seen["timeout_ms"] and "maximum" not in seen["timeout_ms"], seen
    assert "minLength" not in seen["command"], seen
    refusal = run.results[0]
    assert "schema_mismatch" in refusal and "/timeout_ms [minimum]" in refusal, refusal
    assert "hi\n[exit code" not in refusal


def test_codex_exec_blocks_destructive_tools_without_their_approval_mode(
    tmp_path: Path, project: Path
) -> None:
    """Codex decides from the tool annotations: `bash` (destructiveHint) does not run in
    `codex exec` unless its approval_mode is "approve", even with --approvals client."""
    agent = Codex(tmp_path / "agent", project)
    script = [tool("mcp__toolhost__bash", command="touch made.txt"), say("ok")]
    run = agent.run("Make a file.", script, approvals="client")
    assert run.returncode == 0, run.describe()
    assert "requires approval" in run.results[0], run.results
    assert not (project / "made.txt").exists()
    allowed = agent.run("Make a file.", script, approvals="client", allow=("bash",), label="ok")
    assert "[exit code 0]" in allowed.results[0], allowed.results
    assert (project / "made.txt").exists()


def test_gemini_cli_headless_leaves_out_tools_it_cannot_confirm(
    tmp_path: Path, project: Path
) -> None:
    """`gemini -p` cannot confirm a tool call, so it offers the model only the MCP tools its
    policy allows (here none): toolhost's tools need a policy rule (or "trust": true)."""
    agent = AGENTS["gemini"](tmp_path / "agent", project)
    run = agent.run("Say hi.", [say("hi")])
    assert run.returncode == 0, run.describe()
    names = tool_names(run.first_turn)
    assert "read_file" in names, names  # Gemini CLI's own tools are there
    assert "mcp_toolhost_edit_file" not in names, names
    allowed = agent.run("Say hi.", [say("hi")], allow=("edit_file",), label="allowed")
    assert "mcp_toolhost_edit_file" in tool_names(allowed.first_turn)


REVISIONS = {"claude": "2026-07-28", "codex": "2025-06-18", "gemini": "2025-06-18"}


@pytest.mark.parametrize("name", sorted(REVISIONS))
def test_the_protocol_revision_each_agent_speaks(name: str, tmp_path: Path, project: Path) -> None:
    """What each agent opens the connection with, and that toolhost answers in kind."""
    agent: Agent = AGENTS[name](tmp_path / "agent", project)
    record = tmp_path / "pipes"
    record.mkdir()
    run = agent.run("Say hi.", [say("hi")], allow=("read_file",), record=record)
    assert run.returncode == 0, run.describe()
    sent = [json.loads(line) for line in (record / "mcp-in.jsonl").read_text().splitlines()]
    answers = [json.loads(line) for line in (record / "mcp-out.jsonl").read_text().splitlines()]
    opening = sent[0]
    if REVISIONS[name] == "2026-07-28":  # no initialize: each request names its revision
        assert opening["method"] == "server/discover", opening
        revision = opening["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        assert revision == REVISIONS[name]
        assert any(REVISIONS[name] in json.dumps(answer.get("result", {})) for answer in answers), (
            answers[:2]
        )
    else:
        assert opening["method"] == "initialize", opening
        assert opening["params"]["protocolVersion"] == REVISIONS[name]
        reply = next(a for a in answers if a.get("id") == opening["id"])
        assert reply["result"]["protocolVersion"] == REVISIONS[name], reply
