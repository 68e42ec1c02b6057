"""Claude Code, Codex and Gemini CLI (the real CLIs from npm) run scripted sessions through
`toolhost mcp`, each in a network namespace of its own beside a scripted model; the tests read
what reached the model.

Gemini CLI's endpoint is pointed at loopback with GOOGLE_GEMINI_BASE_URL (Gemini API: POST
/v1beta/models/M:streamGenerateContent?alt=sse).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.agent_configs import AGENTS, Agent, Codex
from tests.agents.conftest import APP, audit_lines
from tests.agents.model_servers import copy_call, say, tool, tool_names
from tests.mcp.clients import blocked_sdk

pytestmark = [pytest.mark.real_client, pytest.mark.slow]

SESSION_TOOLS = ("read_file", "edit_file", "bash")


def session_script(agent: Agent) -> list[dict[str, object]]:
    return [
        tool(agent.tool("read_file"), path="app.py"),
        tool(agent.tool("edit_file"), path="app.py", old_string="x = 1", new_string="x = 2"),
        tool(agent.tool("bash"), command="python3 app.py"),
        say("Changed x to 2 and ran it."),
    ]


def test_session_with_the_clients_own_approvals(agent: Agent, project: Path) -> None:
    """--approvals client: the agent's own allow list is the approval; the file changes and
    the three results reach the model."""
    run = agent.run(
        "Change x to 2 in app.py and run it.",
        session_script(agent),
        approvals="client",
        allow=SESSION_TOOLS,
    )
    assert run.returncode == 0, run.describe()
    assert (project / "app.py").read_text(encoding="utf-8") == "x = 2\nprint(x)\n"
    first = run.first_turn
    assert {agent.tool(name) for name in SESSION_TOOLS} <= set(tool_names(first))
    read, edit, bash = run.results[:3]
    assert "x = 1" in read and "print(x)" in read, read
    assert "edited app.py" in edit and "+x = 2" in edit, edit
    assert "2" in bash.splitlines() and "[exit code 0]" in bash, bash
    edits = [line for line in audit_lines() if line["tool"] == "edit_file"]
    assert len(edits) == 1, edits
    assert edits[0]["outcome"] == "ok"
    assert edits[0]["decision"] == "client_approved", edits[0]
    assert agent.client_name in str(edits[0]["approvedBy"]), edits[0]


def test_headless_refusal_says_how_to_allow_the_call(agent: Agent, project: Path) -> None:
    """Without --approvals client a headless agent cannot answer toolhost's approval: the
    model reads what happened and both ways forward, not "the user denied"."""
    script = [*session_script(agent)[:2], say("I could not edit.")]
    run = agent.run("Change x to 2 in app.py.", script, allow=SESSION_TOOLS)
    assert run.returncode == 0, run.describe()
    assert (project / "app.py").read_text(encoding="utf-8") == APP
    refusal = run.results[1]
    assert "user denied" not in refusal and "the user dismissed" not in refusal, refusal
    assert "--approvals client" in refusal, refusal
    assert "allow rule such as" in refusal and "edit_file(/app.py)" in refusal, refusal
    if agent.declares_elicitation:  # the form was sent and answered at once, unseen
        assert "permission.form_not_shown" in refusal, refusal
        assert "without showing" in refusal, refusal
    else:  # no form can be sent at all
        assert "permission.unattended" in refusal, refusal


def test_a_refused_call_and_a_truncated_result_paged_back(agent: Agent, project: Path) -> None:
    """A call toolhost refuses, then a result cut to fit that the model pages back with the
    exact call the result names."""
    (project.parent / "outside.txt").write_text("not yours\n", encoding="utf-8")
    use_capability = agent.tool("use_capability")
    script = [
        tool(agent.tool("read_file"), path="../outside.txt"),
        tool(agent.tool("bash"), command="seq 1 100000"),
        copy_call(use_capability),
        say("Read it all."),
    ]
    run = agent.run(
        "Read ../outside.txt, then list 100000 numbers.",
        script,
        allow=("read_file", "bash", "use_capability"),
    )
    assert run.returncode == 0, run.describe()
    refused, cut, page = run.results[:3]
    assert "workspace.outside_scope" in refused, refused
    assert "use a path inside the workspace" in refused, refused
    assert "not yours" not in refused
    assert "cut to fit" in cut and "result_ref" in cut, cut[-600:]
    assert "not yours" not in page
    # The page continues where the cut result stopped: the numbers after the shown part.
    shown = [line for line in cut.splitlines() if line.isdigit()]
    paged = [line for line in page.splitlines() if line.isdigit()]
    assert paged, page[:600]
    assert set(paged).isdisjoint(shown[: len(shown) // 2]), (paged[:3], shown[:3])


def test_the_first_turn_carries_toolhosts_tools_5_of_5(agent: Agent) -> None:
    """The agent's first model request offers toolhost's tools, in 5 runs of 5, set up as
    `claude mcp add` / `codex mcp add` / `gemini mcp add` leave it (no Codex `required`)."""
    if isinstance(agent, Codex):
        agent.required = False
    missing = []
    for attempt in range(5):
        run = agent.run("Say hi.", [say("hi")], allow=SESSION_TOOLS, label=f"run{attempt}")
        assert run.returncode == 0, run.describe()
        if agent.tool("read_file") not in tool_names(run.first_turn):
            missing.append(attempt)
    assert not missing, f"the first model request lacked toolhost's tools in runs {missing} of 5"


def test_claude_codes_session_runs_while_the_sdk_cannot_load(tmp_path: Path, project: Path) -> None:
    """Claude Code speaks MCP 2026-07-28 and puts its tool use id and a progress token in each
    call's `_meta`: its opening, listing and calls are the front's own (mcp/stdio/fast.py), so the
    whole session runs with an SDK that takes ten minutes to import."""
    agent = AGENTS["claude"](tmp_path / "agent", project)
    run = agent.run(
        "Change x to 2 in app.py and run it.",
        session_script(agent),
        approvals="client",
        allow=SESSION_TOOLS,
        env=blocked_sdk(tmp_path),
    )
    assert run.returncode == 0, run.describe()
    assert (project / "app.py").read_text(encoding="utf-8") == "x = 2\nprint(x)\n"
    read, edit, bash = run.results[:3]
    assert "x = 1" in read and "edited app.py" in edit, (read, edit)
    assert "[exit code 0]" in bash, bash
