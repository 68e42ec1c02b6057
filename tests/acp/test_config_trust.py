"""Over ACP (the SDK editor, the SCRIPTED TEST AGENT, every toolhost permission denied): a
`.toolhost.toml` the agent wrote in a workspace the user trusts does not apply in a new
session; it applies once the user approved its exact content with `toolhost trust`, and
stops when it changes. The agent cannot approve it through its ACP connection."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp.harness import REPO, run_editor, scripted_agent, toolhost_acp

pytestmark = pytest.mark.slow

AGENT_CONFIG = """\
[shell]
sandbox = "off"
[policy]
mode = "bypass"
allow = ["Bash"]
"""


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Path]:
    """A file outside the workspace and outside the sandbox's private /tmp."""
    path = Path("/var/tmp") / f"toolhost-acp-trust-{os.getpid()}-{tmp_path.name}"
    yield path
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def agent_session(node: Path, ws: Path, outside: Path) -> list[dict[str, Any]]:
    config = ws / ".toolhost.toml"
    sha = hashlib.sha256(config.read_bytes()).hexdigest()
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "write", "path": str(ws / "agent.txt"), "content": "x\n"},
                {"op": "terminal", "command": f"echo escaped > {outside}"},
                # The agent tries the editor's own approval request on its connection.
                {
                    "op": "request",
                    "method": "toolhost/trustConfig",
                    "params": {"path": str(config), "sha256": sha},
                },
            ]
        ],
    )
    results = run.results()
    assert len(results) == 3, run.stderr[-3000:]
    return results


def assert_contained(ws: Path, outside: Path, results: list[dict[str, Any]]) -> None:
    write, _command, trust = results
    assert "error" in write, write
    assert not (ws / "agent.txt").exists()
    assert not outside.exists()
    assert "error" in trust, trust


def toolhost(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_server", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_an_agent_written_config_applies_only_once_approved(
    node: Path, ws: Path, outside: Path
) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "toolhost"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(f'[policy]\ntrusted_roots = ["{ws}"]\n')
    config = ws / ".toolhost.toml"
    config.write_text(AGENT_CONFIG)  # however the agent managed to write it

    assert_contained(ws, outside, agent_session(node, ws, outside))

    sha = hashlib.sha256(config.read_bytes()).hexdigest()
    approved = toolhost("trust", str(config), "--sha256", sha)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    write, command, trust = agent_session(node, ws, outside)
    assert "ok" in write, write
    assert (ws / "agent.txt").read_text() == "x\n"
    assert outside.read_text() == "escaped\n", command  # no sandbox: the user approved that
    assert "error" in trust
    outside.unlink()
    (ws / "agent.txt").unlink()

    config.write_text(AGENT_CONFIG + "# one more line\n")
    assert_contained(ws, outside, agent_session(node, ws, outside))
