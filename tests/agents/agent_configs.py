"""How each real agent CLI is configured and started against `toolhost mcp` and the scripted
model: its own HOME (and CODEX_HOME), update checks, telemetry and plugin sync off, the model's
base URL on loopback, toolhost as its one MCP server, and the agent's own allow list for the
tools a scenario uses. docs/MCP.md shows these same settings to users."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from tests.agents.agent_runs import (
    MODEL_URL,
    AgentRun,
    agent_program,
    require_netns,
    run_in_netns,
    toolhost_program,
)
from tests.agents.model_wire import Step


@dataclass
class Agent:
    """One agent CLI set up in `folder` (its home), run in `workspace`."""

    folder: Path
    workspace: Path

    name = ""
    client_name = ""
    """The agent's clientInfo name in MCP's initialize."""
    declares_elicitation = False

    def tool(self, name: str) -> str:
        """The name the model sees for toolhost's tool `name`."""
        return f"mcp__toolhost__{name}"

    def server_command(self, approvals: str | None, record: Path | None) -> list[str]:
        """How the agent starts toolhost; `record`: a folder where a recorder on the pipes
        keeps what the agent sent (mcp-in.jsonl) and what toolhost answered (mcp-out.jsonl)."""
        args = ["mcp", "--root", str(self.workspace)]
        args += ["--approvals", approvals] if approvals else []
        if record is None:
            return [toolhost_program(), *args]
        pipes = f'tee -a {record}/mcp-in.jsonl | "$0" "$@" | tee -a {record}/mcp-out.jsonl'
        return ["/bin/sh", "-c", pipes, toolhost_program(), *args]

    def run(
        self,
        prompt: str,
        script: list[Step],
        *,
        approvals: str | None = None,
        allow: tuple[str, ...] = (),
        label: str = "run",
        env: dict[str, str] | None = None,
        record: Path | None = None,
    ) -> AgentRun:
        """One headless run: `allow` is the agent's own allow list (toolhost tool names);
        `env` changes the agent's environment."""
        program = agent_program(self.name)
        require_netns()
        home = self.folder / label / "home"
        home.mkdir(parents=True, exist_ok=True)
        server = self.server_command(approvals, record)
        command, own_env = self.setup(program, prompt, home, server, allow)
        return run_in_netns(
            command,
            cwd=self.workspace,
            env={"HOME": str(home)} | own_env | (env or {}),
            script=script,
            folder=self.folder / label,
        )

    def setup(
        self, program: str, prompt: str, home: Path, toolhost: list[str], allow: tuple[str, ...]
    ) -> tuple[list[str], dict[str, str]]:
        raise NotImplementedError


class ClaudeCode(Agent):
    name = "claude"
    client_name = "claude-code"
    declares_elicitation = True

    def setup(
        self, program: str, prompt: str, home: Path, toolhost: list[str], allow: tuple[str, ...]
    ) -> tuple[list[str], dict[str, str]]:
        config = home / "mcp.json"
        server = {"command": toolhost[0], "args": toolhost[1:]}
        config.write_text(json.dumps({"mcpServers": {"toolhost": server}}), encoding="utf-8")
        command = [program, "-p", prompt, "--mcp-config", str(config), "--strict-mcp-config"]
        if allow:
            command += ["--allowedTools", ",".join(self.tool(name) for name in allow)]
        command += ["--output-format", "stream-json", "--verbose"]
        return command, claude_env()


def claude_env() -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": MODEL_URL,
        "ANTHROPIC_API_KEY": "sk-scripted-model",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        # Else MCP tools wait behind the ToolSearch tool and the first turn names none of them.
        "ENABLE_TOOL_SEARCH": "false",
    }


class Codex(Agent):
    name = "codex"
    client_name = "codex-mcp-client"
    declares_elicitation = True
    required = True
    """`required = true` on toolhost's server: the first turn waits for its tools."""

    def setup(
        self, program: str, prompt: str, home: Path, toolhost: list[str], allow: tuple[str, ...]
    ) -> tuple[list[str], dict[str, str]]:
        codex_home = home / ".codex"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(
            codex_config(toolhost[0], toolhost[1:], allow, required=self.required),
            encoding="utf-8",
        )
        command = [program, "exec", "--json", "--skip-git-repo-check", prompt]
        return command, {"CODEX_HOME": str(codex_home), "SCRIPTED_MODEL_KEY": "scripted"}


def codex_env() -> str:
    """toolhost's own folders as a TOML inline table's entries."""
    passed = ("TOOLHOST_STATE_DIR", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR")
    present = [key for key in passed if key in os.environ]
    return ", ".join(f"{key} = {json.dumps(os.environ[key])}" for key in present)


def codex_config(
    program: str, args: list[str], allow: tuple[str, ...], *, required: bool = True
) -> str:
    lines = [
        'model = "gpt-scripted"',
        'model_provider = "scripted"',
        "check_for_update_on_startup = false",
        "",
        "[model_providers.scripted]",
        'name = "scripted model on loopback"',
        f'base_url = "{MODEL_URL}/v1"',
        'wire_api = "responses"',
        'env_key = "SCRIPTED_MODEL_KEY"',
        "supports_websockets = false",
        "",
        "[features]",
        "plugins = false",
        "remote_plugin = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[feedback]",
        "enabled = false",
        "",
        "[mcp_servers.toolhost]",
        f"command = {json.dumps(program)}",
        f"args = {json.dumps(args)}",
        # Codex starts MCP servers with a few variables only: toolhost's state and config
        # folders (the test's own) are passed by name.
        f"env = {{ {codex_env()} }}",
        # Codex gives optional MCP servers about a second, then runs the turn without the
        # tools of any still starting; a required server is waited for (docs/MCP.md).
        f"required = {'true' if required else 'false'}",
    ]
    for name in allow:  # Codex's own approval: these tools run without asking anyone
        lines += ["", f"[mcp_servers.toolhost.tools.{name}]", 'approval_mode = "approve"']
    return "\n".join(lines) + "\n"


class GeminiCli(Agent):
    name = "gemini"
    client_name = "gemini-cli-mcp-client"

    def tool(self, name: str) -> str:
        return f"mcp_toolhost_{name}"

    def setup(
        self, program: str, prompt: str, home: Path, toolhost: list[str], allow: tuple[str, ...]
    ) -> tuple[list[str], dict[str, str]]:
        gemini = home / ".gemini"
        (gemini / "policies").mkdir(parents=True, exist_ok=True)
        settings = {
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            # An API key with a base URL of our own; a fixed model (no routing request).
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "model": {"name": "gemini-2.5-pro"},
            "mcpServers": {"toolhost": {"command": toolhost[0], "args": toolhost[1:]}},
        }
        (gemini / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        (gemini / "policies" / "toolhost.toml").write_text(gemini_policy(allow), encoding="utf-8")
        command = [program, "-p", prompt, "--output-format", "stream-json"]
        env = {
            "GOOGLE_GEMINI_BASE_URL": MODEL_URL,
            "GEMINI_API_KEY": "scripted",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
        return command, env


def gemini_policy(allow: tuple[str, ...]) -> str:
    """Gemini CLI's own allow list: policy-engine rules for toolhost's tools."""
    rules = []
    for name in allow:
        rules += ["[[rule]]", 'mcpName = "toolhost"', f'toolName = "{name}"']
        rules += ['decision = "allow"', "priority = 100", ""]
    return "\n".join(rules)


AGENTS: dict[str, type[Agent]] = {"claude": ClaudeCode, "codex": Codex, "gemini": GeminiCli}
