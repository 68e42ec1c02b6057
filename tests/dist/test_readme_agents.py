"""The README's agent lines, verbatim, for a user who ran its Install block (a clean HOME, the
built wheel), then a session of each real agent CLI through to a read and an edit: Claude Code
in its own interactive UI (toolhost's approval form answered there, as a person does), Codex
with the README's config.toml lines (`codex exec`), Gemini CLI after the folder trust the
README names (answered in its own UI) headless with a policy rule per tool (`gemini -p`).

What the test adds itself is what a user has and CI has not: the model (a scripted one on
loopback, in a network namespace of its own: tests/agents/in_netns.py), its endpoint and key
in each agent's settings, and Claude Code's first-run screens already passed."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
import tomllib
from pathlib import Path

import pytest
import tomlkit

from tests.agents.agent_configs import AGENTS, claude_env, codex_config
from tests.agents.agent_runs import netns_argv, require_netns
from tests.agents.model_servers import read_log, say, tool, tool_results
from tests.agents.pty_screen import TerminalScreen
from tests.conftest import missing_part
from tests.dist.conftest import REPO, ReadmeUser, install_blocks, sh

pytestmark = [pytest.mark.slow, pytest.mark.real_client, pytest.mark.timeout(900)]
AGENT_BIN = REPO / ".tools" / "agents" / "node_modules" / ".bin"
APP = "x = 1\nprint(x)\n"
EDITED = "x = 2\nprint(x)\n"
PROMPT = "Change x to 2 in app.py."
ALLOWED = ("read_file", "edit_file")


@pytest.fixture(scope="module")
def project(readme_user: ReadmeUser, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder where the user ran the README's three agent lines."""
    if not (AGENT_BIN / "claude").exists():
        missing_part("the agent CLIs are missing (.tools/agents, scripts/setup of the agents)")
    require_netns()
    root = tmp_path_factory.mktemp("readme-agents") / "project"
    (root / ".git").mkdir(parents=True)
    lines = install_blocks("sh")[1]
    env = agent_path(readme_user)
    done = sh(f"unshare -n -- bash -euo pipefail -c {shlex.quote(lines)}", env, root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


@pytest.fixture
def app(project: Path) -> Path:
    app = project / "app.py"
    app.write_text(APP, encoding="utf-8")
    return app


def agent_path(user: ReadmeUser) -> dict[str, str]:
    """The user's environment with the agent CLIs (installed with npm) on PATH, without the
    install tests' audit hook: the scripted model's harness (in_netns.py) runs from the
    checkout, and what it reads there is the test's, not toolhost's."""
    env = {k: v for k, v in user.env.items() if k != "PYTHONPATH" and "TOOLHOST_TEST" not in k}
    return {**env, "PATH": f"{user.env['PATH']}:{AGENT_BIN}"}


def script_for(agent: str) -> list[dict[str, object]]:
    """The scripted model's turns: read app.py, edit it, say so."""
    named = AGENTS[agent](Path("."), Path(".")).tool
    return [
        tool(named("read_file"), path="app.py"),
        tool(named("edit_file"), path="app.py", old_string="x = 1", new_string="x = 2"),
        say("Done: x is 2."),
    ]


def headless(
    command: list[str],
    env: dict[str, str],
    cwd: Path,
    script: list[dict[str, object]],
    folder: Path,
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`command` beside the scripted model in a network namespace of its own, with exactly
    `env` (the user's, nothing of the test process); what it printed and the tool results
    the model read."""
    argv, log = netns_argv(command, script, folder)
    process = subprocess.Popen(
        argv, cwd=cwd, env=env | {"NO_COLOR": "1"}, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        stdout, stderr = process.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    turns = [r for r in read_log(log) if r.body.get("tools")]
    done = subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)
    return done, tool_results(turns[-1]) if turns else []


def assert_read_and_edited(results: list[str], app: Path, said: str) -> None:
    assert len(results) >= 2, said
    read, edit = results[:2]
    assert "x = 1" in read and "print(x)" in read, read
    assert "edited app.py" in edit and "+x = 2" in edit, edit
    assert app.read_text(encoding="utf-8") == EDITED, said


def test_claude_code_reads_and_edits_through_its_own_ui(
    readme_user: ReadmeUser, project: Path, app: Path, tmp_path: Path
) -> None:
    """`claude mcp add ... "$(command -v toolhost)" mcp`, then `claude` in the project: /mcp
    shows toolhost connected, the model reads app.py, toolhost's form for the edit appears in
    Claude Code's UI and Allow once there lets the edit land."""
    home = readme_user.home
    state = json.loads((home / ".claude.json").read_text(encoding="utf-8"))
    # A person who has used Claude Code before: onboarding done, this folder trusted, the
    # (scripted model's) API key accepted; else the first screens go online.
    state |= {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [claude_env()["ANTHROPIC_API_KEY"][-20:]]},
    }
    state["projects"][str(project)]["hasTrustDialogAccepted"] = True
    (home / ".claude.json").write_text(json.dumps(state), encoding="utf-8")
    allowed = ",".join(f"mcp__toolhost__{name}" for name in ALLOWED)
    command = [str(AGENT_BIN / "claude"), "--permission-mode", "default"]
    command += ["--allowedTools", allowed]
    argv, log = netns_argv(command, script_for("claude"), tmp_path / "model")
    screen = TerminalScreen(argv, env=agent_path(readme_user) | claude_env(), cwd=project)
    try:
        screen.wait_for("manual mode on")
        screen.press("/mcp")
        screen.wait_for("Manage MCP servers")
        screen.press("enter")
        screen.wait_for("✔ toolhost")
        screen.press("esc")
        screen.wait_for("? for shortcuts")
        screen.press(PROMPT)
        screen.press("enter")
        shown = screen.wait_for("requests your input", "Decision")
        assert "-x = 1" in shown and "+x = 2" in shown, shown
        screen.press("right", "up", "up", "space")
        screen.wait_for("Decision: ▸ Allow once")
        screen.press("down", "down")
        screen.wait_for("❯ Accept")
        screen.press_until_gone("enter", "requests your input")
        shown = screen.wait_for("Done: x is 2.")
    finally:
        screen.close()
    turns = [r for r in read_log(log) if r.body.get("tools")]
    assert_read_and_edited(tool_results(turns[-1]) if turns else [], app, shown)


def test_codex_reads_and_edits_with_the_readmes_settings(
    readme_user: ReadmeUser, project: Path, app: Path, tmp_path: Path
) -> None:
    """`codex mcp add ... --approvals client` and the README's config.toml lines
    (`required = true`, the tools' approval mode), then `codex exec`."""
    config_file = readme_user.home / ".codex" / "config.toml"
    config = tomlkit.parse(config_file.read_text(encoding="utf-8"))
    # The README's lines, added to the table `codex mcp add` wrote, as a user edits the file.
    merge(config, tomlkit.parse(install_blocks("toml")[0]))
    # The model: a provider on loopback instead of a login (the test's part).
    model = tomlkit.parse(codex_config("unused", [], ()))
    del model["mcp_servers"]
    merge(config, model)
    config_file.write_text(tomlkit.dumps(config), encoding="utf-8")
    written = tomllib.loads(config_file.read_text(encoding="utf-8"))["mcp_servers"]["toolhost"]
    assert written["required"] is True and written["args"] == ["mcp", "--approvals", "client"]
    command = [str(AGENT_BIN / "codex"), "exec", "--json", "--skip-git-repo-check", PROMPT]
    env = agent_path(readme_user) | {"SCRIPTED_MODEL_KEY": "scripted"}
    done, results = headless(command, env, project, script_for("codex"), tmp_path / "model")
    said = f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, said
    assert_read_and_edited(results, app, said)


def test_gemini_cli_reads_and_edits_in_a_trusted_folder(
    readme_user: ReadmeUser, project: Path, app: Path, tmp_path: Path
) -> None:
    """`gemini mcp add ... --approvals client` (the project's .gemini/settings.json): in a
    folder not trusted yet `gemini -p` stops and names the trust step; `gemini` started there
    asks "Do you trust the files in this folder?", Trust folder, and toolhost connects; then
    `gemini -p` with a policy rule per tool (its own approval) reads and edits."""
    gemini = readme_user.home / ".gemini"
    (gemini / "policies").mkdir(parents=True, exist_ok=True)
    # docs/MCP.md's allow list for `gemini -p`: a policy rule per tool.
    rules = [f'[[rule]]\ntoolName = "mcp_toolhost_{name}"\ndecision = "allow"\npriority = 100\n'
             for name in ALLOWED]  # fmt: skip
    (gemini / "policies" / "toolhost.toml").write_text("\n".join(rules), encoding="utf-8")
    # The model: an API key with a base URL on loopback, a fixed model (the test's part).
    settings = {
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "model": {"name": "gemini-2.5-pro"},
    }
    (gemini / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = agent_path(readme_user) | {
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:8765",
        "GEMINI_API_KEY": "scripted",
    }
    command = [str(AGENT_BIN / "gemini"), "-p", PROMPT, "--output-format", "stream-json"]
    untrusted, _ = headless(command, env, project, [say("hi")], tmp_path / "untrusted")
    assert untrusted.returncode != 0, untrusted.stdout
    assert "not running in a trusted directory" in untrusted.stderr, untrusted.stderr
    assert app.read_text(encoding="utf-8") == APP
    # The first interactive start, as the README says: Trust folder (the first choice).
    argv, _ = netns_argv([str(AGENT_BIN / "gemini")], [say("hi")], tmp_path / "trust")
    screen = TerminalScreen(argv, env=env, cwd=project)
    try:
        screen.wait_for(
            "Do you trust the files in this folder?", f"1. Trust folder ({project.name})"
        )
        screen.press_until_gone("enter", "Do you trust the files in this folder?")
        assert trusted(readme_user.home, project), screen.text()
        shown = screen.wait_for("Type your message")
        assert "Unrecognized tool name" not in shown, shown  # the policy file is taken as is
    finally:
        screen.close()
    done, results = headless(command, env, project, script_for("gemini"), tmp_path / "model")
    said = f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, said
    assert_read_and_edited(results, app, said)


def trusted(home: Path, folder: Path) -> bool:
    """Whether Gemini CLI keeps `folder` as trusted (its answer to the trust question lands
    in ~/.gemini/trustedFolders.json), waiting for the file up to 30 s."""
    kept = home / ".gemini" / "trustedFolders.json"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if json.loads(kept.read_text()).get(str(folder)) == "TRUST_FOLDER":
                return True
        except (OSError, ValueError):  # not written yet, or half
            pass
        time.sleep(0.2)
    return False


def merge(into: tomlkit.TOMLDocument | dict[str, object], extra: dict[str, object]) -> None:
    """TOML tables merged key by key (`extra` wins), as a user adds lines to a table."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)  # type: ignore[arg-type]
        else:
            into[key] = value
