"""One run of a real agent CLI where only loopback exists: `unshare -n` gives it a network
namespace of its own, in_netns.py brings `lo` up and serves the scripted model there, the agent
starts `toolhost mcp` as its MCP server. The run's record: exit status, output, and every
request that reached the model.

A missing agent CLI or a kernel without network namespaces skips here and fails in CI
(TOOLHOST_REQUIRE_CLIENTS=1), like every real client of the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agents.model_servers import read_log
from tests.agents.model_wire import Logged, Step, tool_names, tool_results
from tests.conftest import missing_part, require_program

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
AGENT_BIN = REPO / ".tools" / "agents" / "node_modules" / ".bin"
IN_NETNS = HERE / "in_netns.py"
MODEL_URL = "http://127.0.0.1:8765"  # in_netns.MODEL_PORT; each namespace has its own
RUN_TIMEOUT = 180
# What every agent inherits from the test process: toolhost's own state, config and runtime
# folders (isolated per test by tests/conftest.py), and how to find node.
PASSED_ON = ("PATH", "TOOLHOST_STATE_DIR", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "TOOLHOST_LOG")


def agent_program(name: str) -> str:
    """The agent CLI installed by scripts/setup/75-agents.sh (skip here, fail in CI)."""
    return require_program(str(AGENT_BIN / name), f"the real {name} CLI (tests/agents/npm)")


def require_netns() -> None:
    """The agents run in a network namespace of their own: without one, no agent test runs."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        missing_part("unshare (util-linux) and ip (iproute2) are needed to run agents offline")
    probe = subprocess.run(
        ["unshare", "-n", "ip", "link", "set", "lo", "up"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        missing_part(f"no network namespace for the agents (unshare -n): {probe.stderr.strip()}")


def toolhost_program() -> str:
    toolhost = Path(sys.executable).parent / "toolhost"
    return str(toolhost) if toolhost.exists() else shutil.which("toolhost") or "toolhost"


@dataclass
class AgentRun:
    """What one run left behind."""

    returncode: int
    stdout: str
    stderr: str
    requests: list[Logged]

    @property
    def turns(self) -> list[Logged]:
        """The conversation's requests: those that offer the model tools (side requests such
        as titles offer none)."""
        return [r for r in self.requests if tool_names(r)]

    @property
    def first_turn(self) -> Logged:
        assert self.turns, f"no model request offered tools; {self.describe()}"
        return self.turns[0]

    @property
    def results(self) -> list[str]:
        """The tool results the model read, in order (from the conversation's last request)."""
        return tool_results(self.turns[-1]) if self.turns else []

    def events(self) -> list[dict[str, Any]]:
        """The agent's JSON-lines output (stream-json / --json), where it wrote any."""
        parsed = []
        for line in self.stdout.splitlines():
            if line.startswith("{"):
                try:
                    parsed.append(json.loads(line))
                except ValueError:
                    continue
        return parsed

    def describe(self) -> str:
        return (
            f"exit {self.returncode}; {len(self.requests)} model requests; "
            f"stdout tail: {self.stdout[-1500:]!r}; stderr tail: {self.stderr[-1500:]!r}"
        )


def run_in_netns(
    command: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    script: list[Step],
    folder: Path,
    timeout: float = RUN_TIMEOUT,
) -> AgentRun:
    """Run `command` (an agent) in a new network namespace beside the scripted model."""
    argv, log = netns_argv(command, script, folder)
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=agent_env(env) | {"NO_COLOR": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        stderr += f"\n[the run did not finish within {timeout:g} s and was killed]"
    return AgentRun(process.returncode, stdout, stderr, read_log(log))


def netns_argv(command: list[str], script: list[Step], folder: Path) -> tuple[list[str], Path]:
    """`command` wrapped to run in a new network namespace beside the scripted model; the
    file the model's request log goes to."""
    folder.mkdir(parents=True, exist_ok=True)
    script_file = folder / "script.json"
    log = folder / "requests.jsonl"
    log.unlink(missing_ok=True)
    script_file.write_text(json.dumps(script), encoding="utf-8")
    argv = ["unshare", "-n", "--", sys.executable, str(IN_NETNS)]
    return [*argv, "--script", str(script_file), "--log", str(log), "--", *command], log


def agent_env(env: dict[str, str]) -> dict[str, str]:
    """What an agent runs with: `env` over what it inherits from the test process."""
    inherited = {key: os.environ[key] for key in PASSED_ON if key in os.environ}
    return inherited | {"LANG": "C.UTF-8"} | env
