"""Real ACP agents behind `toolhost acp`, with the official SDK as the editor: the whole
chain (SDK editor -> toolhost acp -> agent -> its model) runs in a network namespace of its
own beside the scripted model of tests/agents (the one mock: no model is reachable here).

    editor, agent = run_agent(node, "claude-code-acp", ws, folder, script, prompt)
    editor.events     what the editor saw (permission requests, updates, the prompt's end)
    agent.requests    what reached the model (tool results included)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.acp.harness import REPO, EditorRun, events_of, toolhost_acp, write_plan
from tests.agents.agent_configs import claude_env, codex_config, gemini_policy
from tests.agents.agent_runs import MODEL_URL, AgentRun, require_netns, run_in_netns
from tests.agents.model_wire import Step
from tests.conftest import require_program

ACP_BIN = REPO / ".tools" / "acp-sdk" / "node_modules" / ".bin"
AGENT_BIN = REPO / ".tools" / "agents" / "node_modules" / ".bin"


def agent_command(name: str, home: Path, workspace: Path) -> tuple[list[str], dict[str, str]]:
    """How each ACP agent starts, and its environment (a HOME of the test's own)."""
    env = {"HOME": str(home), "PYTHONPATH": str(REPO)}
    if name == "claude-code-acp":
        program = require_program(str(ACP_BIN / name), "claude-code-acp (tests/acp/npm)")
        # IS_SANDBOX: Claude Code refuses to start as root otherwise (CI runs as root).
        return [program], env | claude_env() | {"IS_SANDBOX": "1"}
    if name == "codex-acp":
        program = require_program(str(ACP_BIN / name), "codex-acp (tests/acp/npm)")
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        config = codex_config("true", [], ())  # a provider on loopback; MCP from session/new
        config = config[: config.index("[mcp_servers.toolhost]")]
        (codex_home / "config.toml").write_text(config, encoding="utf-8")
        # Codex refuses to put its sandbox helper under the temporary folder, where the test's
        # CODEX_HOME is: name another one.
        tmp = home / "tmp"
        tmp.mkdir(exist_ok=True)
        codex_env = {"CODEX_HOME": str(codex_home), "SCRIPTED_MODEL_KEY": "scripted"}
        return [program], env | codex_env | {"TMPDIR": str(tmp)}
    if name == "gemini":
        program = require_program(str(AGENT_BIN / name), "Gemini CLI (tests/agents/npm)")
        gemini = home / ".gemini"
        (gemini / "policies").mkdir(parents=True, exist_ok=True)
        settings = {
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "model": {"name": "gemini-2.5-pro"},
        }
        (gemini / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        (gemini / "policies" / "toolhost.toml").write_text(gemini_policy(()), encoding="utf-8")
        gemini_env = {
            "GOOGLE_GEMINI_BASE_URL": MODEL_URL,
            "GEMINI_API_KEY": "scripted",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
        return [program, "--experimental-acp"], env | gemini_env
    raise ValueError(name)


def run_agent(
    node: Path,
    name: str,
    workspace: Path,
    folder: Path,
    script: list[Step],
    prompt: str,
    *,
    permissions: list[str] | None = None,
) -> tuple[EditorRun, AgentRun]:
    require_netns()
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    agent, env = agent_command(name, home, workspace)
    plan = write_plan(node, toolhost_acp(*agent), workspace, [prompt], permissions=permissions)
    run = run_in_netns(
        ["node", str(node / "sdk_editor.mjs"), str(plan)],
        cwd=workspace,
        env=env | {"PATH": os.environ.get("PATH", "")},
        script=script,
        folder=folder,
    )
    return EditorRun(events_of(run.stdout), run.stderr), run
