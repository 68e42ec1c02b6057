"""Claude Code's own interactive UI, in a pseudo-terminal read as a screen: an approval is
answered there as a person answers it. Its network namespace holds only loopback and the
scripted model, as for the headless runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.agent_configs import claude_env
from tests.agents.agent_runs import (
    agent_env,
    agent_program,
    netns_argv,
    require_netns,
    toolhost_program,
)
from tests.agents.conftest import audit_lines
from tests.agents.model_servers import Step, read_log, say, tool, tool_results
from tests.agents.pty_screen import TerminalScreen

pytestmark = [pytest.mark.real_client, pytest.mark.slow]

EDIT_SCRIPT = [
    tool("mcp__toolhost__read_file", path="app.py"),
    tool("mcp__toolhost__edit_file", path="app.py", old_string="x = 1", new_string="x = 2"),
    say("Done: x is 2."),
]


class Session:
    """An interactive Claude Code session on a pseudo-terminal."""

    def __init__(self, screen: TerminalScreen, log: Path) -> None:
        self.screen = screen
        self.log = log

    def results(self) -> list[str]:
        turns = [r for r in read_log(self.log) if r.body.get("tools")]
        return tool_results(turns[-1]) if turns else []


@pytest.fixture
def claude_tui(tmp_path: Path, project: Path) -> Iterator[object]:
    sessions: list[TerminalScreen] = []

    def start(
        approvals: str | None, allow: tuple[str, ...], script: list[Step] = EDIT_SCRIPT
    ) -> Session:
        program = agent_program("claude")
        require_netns()
        home = tmp_path / "home"
        home.mkdir()
        # A person who has used Claude Code before: onboarding done, this folder trusted,
        # the API key (of the scripted model) accepted; else the first screens go online.
        state = {
            "hasCompletedOnboarding": True,
            "theme": "dark",
            "customApiKeyResponses": {"approved": [claude_env()["ANTHROPIC_API_KEY"][-20:]]},
            "projects": {str(project): {"hasTrustDialogAccepted": True}},
        }
        (home / ".claude.json").write_text(json.dumps(state), encoding="utf-8")
        args = ["mcp", "--root", str(project)] + (["--approvals", approvals] if approvals else [])
        server = {"command": toolhost_program(), "args": args}
        config = home / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"toolhost": server}}), encoding="utf-8")
        command = [program, "--mcp-config", str(config), "--strict-mcp-config"]
        # The permission mode that asks (the default "auto" mode needs Anthropic's servers).
        command += ["--permission-mode", "default"]
        if allow:
            command += ["--allowedTools", ",".join(f"mcp__toolhost__{n}" for n in allow)]
        argv, log = netns_argv(command, script, tmp_path / "model")
        env = agent_env({"HOME": str(home)} | claude_env())
        screen = TerminalScreen(argv, env=env, cwd=project)
        sessions.append(screen)
        # As a person does: wait until /mcp lists toolhost as connected, then ask. (Whether
        # the first turn waits for the tools by itself is test_sessions' first-turn test.)
        screen.wait_for("manual mode on")
        screen.press("/mcp")
        screen.wait_for("Manage MCP servers")
        screen.press("enter")
        screen.wait_for("✔ toolhost")
        screen.press("esc")
        screen.wait_for("? for shortcuts")
        screen.press("Change x to 2 in app.py.")
        screen.press("enter")
        return Session(screen, log)

    yield start
    for screen in sessions:
        screen.close()


def form_before_the_fold(shown: str) -> list[str]:
    """The lines of toolhost's form that Claude Code shows before folding the rest."""
    lines = shown.splitlines()
    start = next(i for i, line in enumerate(lines) if "requests your input" in line)
    end = next(i for i, line in enumerate(lines) if "more lines)" in line and i > start)
    return [line.strip() for line in lines[start + 1 : end] if line.strip()]


def test_toolhosts_form_answered_in_claude_codes_tui(claude_tui, project: Path) -> None:  # type: ignore[no-untyped-def]
    """Default approvals: toolhost's form appears in Claude Code's UI, leading with the
    change (the diff's changed lines before the fold); Allow once there lets the edit land."""
    session = claude_tui(None, ("read_file", "edit_file"))
    shown = session.screen.wait_for("requests your input", "Decision")
    visible = form_before_the_fold(shown)
    assert visible[0].startswith("Edit app.py: 1 line added, 1 removed"), visible
    assert "-x = 1" in visible and "+x = 2" in visible, visible
    session.screen.press("right", "up", "up", "space")
    session.screen.wait_for("Decision: ▸ Allow once")
    session.screen.press("down", "down")
    session.screen.wait_for("❯ Accept")
    session.screen.press_until_gone("enter", "requests your input")
    session.screen.wait_for("Done: x is 2.")
    assert (project / "app.py").read_text(encoding="utf-8") == "x = 2\nprint(x)\n"
    assert "edited app.py" in session.results()[-1]
    edits = [line for line in audit_lines() if line["tool"] == "edit_file"]
    assert [line["decision"] for line in edits] == ["allow_once"], edits


def test_client_approvals_ask_once_in_claude_codes_own_prompt(claude_tui, project: Path) -> None:  # type: ignore[no-untyped-def]
    """--approvals client: Claude Code's own permission prompt is the only one; Yes there
    lets the edit land, and toolhost shows no second form."""
    session = claude_tui("client", ("read_file",))
    shown = session.screen.wait_for("Edit File", "Do you want to proceed?")
    assert 'old_string: "x = 1"' in shown and 'new_string: "x = 2"' in shown, shown
    session.screen.press_until_gone("enter", "Do you want to proceed?")
    shown = session.screen.wait_for("Done: x is 2.")
    assert "requests your input" not in shown
    assert (project / "app.py").read_text(encoding="utf-8") == "x = 2\nprint(x)\n"
    assert "edited app.py" in session.results()[-1]
    edits = [line for line in audit_lines() if line["tool"] == "edit_file"]
    assert [line["decision"] for line in edits] == ["client_approved"], edits
    assert edits[0]["approvedBy"] == "claude-code", edits


def test_a_running_commands_latest_line_shows_under_the_call(claude_tui, project: Path) -> None:  # type: ignore[no-untyped-def]
    """Claude Code sends a progress token with each call and shows the call's progress under
    it while it runs: toolhost's bash reports the command's latest line, on 2026-07-28 too."""
    command = "echo step one; sleep 3; echo step two; sleep 4; echo finished"
    session = claude_tui(
        None, ("bash",), [tool("mcp__toolhost__bash", command=command), say("Ran.")]
    )
    session.screen.wait_for("Calling toolhost", "step two")  # while the command still runs
    session.screen.wait_for("Ran.")
    assert "finished" in session.results()[-1]
