"""Fixtures of the real-agent tests: a small project and each agent CLI set up in a folder of
the test's own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.agents.agent_configs import AGENTS, Agent

APP = "x = 1\nprint(x)\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The workspace the agent works in: a .git marker and app.py."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "app.py").write_text(APP, encoding="utf-8")
    return root


@pytest.fixture(params=sorted(AGENTS))
def agent(request: pytest.FixtureRequest, tmp_path: Path, project: Path) -> Agent:
    """Each real agent CLI in turn: Claude Code, Codex, Gemini CLI."""
    return AGENTS[request.param](tmp_path / "agent", project)


def audit_lines() -> list[dict[str, object]]:
    """toolhost's audit log of this test (its state folder is the test's own)."""
    lines = []
    for path in Path(os.environ["TOOLHOST_STATE_DIR"]).rglob("audit.jsonl"):
        text = path.read_text(encoding="utf-8")
        lines += [json.loads(line) for line in text.splitlines() if line]
    return lines
