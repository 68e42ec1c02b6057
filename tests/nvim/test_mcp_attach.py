"""Attach end to end: an MCP agent (the SDK client through `toolhost mcp`) edits through a
real Neovim's toolhost: it sees the unsaved buffer, the plugin answers the approval, the edit
lands in the buffer and the disk is untouched while the buffer is dirty."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.nvim.conftest import Neovim

pytestmark = pytest.mark.real_client

REPO = Path(__file__).resolve().parents[2]
NOTES_ON_DISK = "# Notes\n\nline three\nline four\nline five\n"


def test_mcp_agent_edits_the_dirty_buffer_through_neovim(neovim: Neovim) -> None:
    agent = [sys.executable, str(REPO / "tests" / "nvim" / "mcp_agent.py"), str(neovim.workspace)]
    out = neovim.run("mcp_attach", TOOLHOST_TEST_AGENT=json.dumps(agent), PYTHONPATH=str(REPO)).out
    assert out["agent_code"] == 0, out["agent_stderr"]
    agent_out = out["agent"]
    assert agent_out["read_runtime"].startswith("editor (pid ")
    assert "typed by the user, not saved" in agent_out["read_text"]
    assert agent_out["edit_error"] is False, agent_out["edit_text"]
    # The plugin's approval handler was asked, and the prompt names the MCP client.
    assert len(out["prompts"]) == 1 and "agent-beside-nvim (MCP)" in out["prompts"][0]
    assert out["buffer"] == [
        "typed by the user, not saved",
        "# Notes",
        "",
        "line three",
        "line four, by the MCP agent",
        "line five",
    ]
    assert out["modified"] is True
    assert out["disk"] == NOTES_ON_DISK
