"""`toolhost demo` as a newcomer runs it: a quiet end with the three next steps."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.clients import toolhost_command


@pytest.mark.slow
def test_the_demo_ends_quietly_with_the_next_steps(tmp_path: Path) -> None:
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(tmp_path / "state")}
    env.pop("TOOLHOST_LOG", None)
    done = subprocess.run(
        [*toolhost_command(), "demo"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # nothing like "Ignoring notification ... 'window/logMessage'"
    tail = done.stdout.rstrip("\n").splitlines()[-4:]
    assert tail[0] == "Next", tail
    editor, agent, cli = (line.split(maxsplit=1) for line in tail[1:])
    assert editor[0] == "editor" and "VS Code, Neovim or Emacs" in editor[1]
    assert agent[0] == "agent" and "claude mcp add toolhost -- " in agent[1]
    assert cli[0] == "CLI" and "call read_file" in cli[1]
    toolhost = agent[1].split(" -- ")[1].split(" mcp")[0]
    assert toolhost in ("$(command -v toolhost)", toolhost_command()[0]), (toolhost, sys.argv)
