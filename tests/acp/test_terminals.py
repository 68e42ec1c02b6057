"""ACP terminals on toolhost's shell: the sandbox, output limits, kill, and the checkpoint of
a command reverted with `toolhost revert` (the SDK editor, the SCRIPTED TEST AGENT)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_server.sandbox.platforms import find_backend
from tests.acp.harness import REPO, audit_lines, run_editor, scripted_agent, toolhost_acp
from tests.conftest import missing_part, require_program

pytestmark = pytest.mark.slow


@pytest.fixture
def sandbox() -> None:
    require_program("bwrap", "ACP terminals run in toolhost's bubblewrap sandbox")
    found = find_backend(os.environ.get("PATH"))
    if found.problem is not None:
        missing_part(found.problem)


def _toolhost(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_server", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_a_terminal_runs_in_the_sandbox_and_its_checkpoint_reverts(
    node: Path, ws: Path, tmp_path: Path, sandbox: None
) -> None:
    outside = Path("/var/tmp") / f"toolhost-acp-{tmp_path.name}"
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "terminal", "command": "echo made > made.txt && echo more >> notes.md"},
                {"op": "terminal", "command": f"echo x > {outside}"},
                {"op": "terminal", "command": "true", "cwd": str(outside.parent)},
            ]
        ],
    )
    made, escaped, cwd_outside = run.results()
    assert made["ok"]["exit"] == {"exitCode": 0, "signal": None}, made
    assert escaped["ok"]["exit"]["exitCode"] != 0
    assert "Read-only file system" in escaped["ok"]["output"]["output"]
    assert not outside.exists()
    assert cwd_outside["error"]["data"]["code"] == "workspace.outside_scope"
    assert run.of("permission") == []  # sandboxed commands need no approval
    assert (ws / "made.txt").read_text() == "made\n"

    bash_calls = [line for line in audit_lines() if line["tool"] == "bash"]
    first = bash_calls[0]["callId"]
    listed = json.loads(_toolhost("checkpoints", "--root", str(ws), "--json").stdout)
    assert first in json.dumps(listed)
    reverted = _toolhost("revert", first, "--root", str(ws))
    assert reverted.returncode == 0, reverted.stderr + reverted.stdout
    assert not (ws / "made.txt").exists()
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"


def test_env_cwd_output_limit_and_kill(node: Path, ws: Path, sandbox: None) -> None:
    (ws / "sub").mkdir()
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {
                    "op": "terminal",
                    "command": "sh",
                    "args": ["-c", 'echo "$GREETING from $(pwd)"'],
                    "env": [{"name": "GREETING", "value": "hi there"}],
                    "cwd": str(ws / "sub"),
                },
                {"op": "terminal", "command": "seq 1 5000", "outputByteLimit": 100},
                {"op": "terminal", "command": "sleep 600", "kill": True},
                {"op": "terminal", "command": "true", "cwd": "sub"},
            ]
        ],
    )
    env_cwd, limited, killed, relative = run.results()
    assert env_cwd["ok"]["output"]["output"].startswith(f"hi there from {ws / 'sub'}\n")
    output: dict[str, Any] = limited["ok"]["output"]
    assert output["truncated"] is True
    assert len(output["output"].encode()) <= 100
    assert output["output"].endswith("4999\n5000\n")
    assert killed["ok"]["exit"]["exitCode"] != 0 or killed["ok"]["exit"]["signal"]
    assert relative["error"]["data"]["code"] == "invalid_argument"


def test_a_program_that_asks_gets_the_end_of_its_input_and_says_what_it_asked(
    node: Path, ws: Path, sandbox: None
) -> None:
    """ACP cannot send input to a terminal: the prompt is named in the output and the
    program reads the end of its input instead of waiting for ever."""
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [[{"op": "terminal", "command": 'read -p "Name: " n || echo "no answer"; echo "hi $n"'}]],
    )
    (asked,) = run.results()
    output = asked["ok"]["output"]["output"]
    assert "the program waits for input: `Name:`" in output, output
    assert "ACP terminals cannot send input" in output
    assert "no answer" in output and output.rstrip().endswith("hi")
    assert asked["ok"]["exit"] == {"exitCode": 0, "signal": None}
