"""The Neovim plugin against the real server: start, commands, API, health, approvals."""

from __future__ import annotations

import pytest

from tests.nvim.conftest import Neovim

pytestmark = pytest.mark.real_client


def test_plugin_starts_server_and_runs_commands(neovim: Neovim) -> None:
    out = neovim.run("plugin_basics").out
    assert out["server_toolhost"]["protocolVersion"] == 1
    assert out["root_dir"] == str(neovim.workspace)

    result = out["call_result"]
    assert result["isError"] is False
    assert any("hello from the fixture" in line for line in out["output_lines"])
    assert "line four" in out["api_text"]
    assert "read_file" in out["core_tool_names"]
    assert any(line.startswith("read_file") for line in out["tools_lines"])
    assert any("root:" in line for line in out["status_lines"])
    assert out["jobs_lines"] == ["no background jobs"]
    assert {entry["tool"] for entry in out["activity"]} >= {"read_file"}

    health = "\n".join(out["health_lines"])
    assert "toolhost" in health
    assert "toolhost/status answered" in health
    assert "ERROR" not in health


def test_approval_through_vim_ui_select(neovim: Neovim) -> None:
    out = neovim.run("approval").out
    # First prompt: the user picked "Show diff", got the diff and was asked again.
    assert len(out["prompts"]) == 3
    assert "Show diff" in out["items"][0]
    assert any(line.startswith("+goodbye") for line in out["diff_lines"])
    assert "hello.txt" in out["prompts"][0]

    assert out["allowed"]["isError"] is False, out["allowed"]
    assert out["allowed"]["meta"]["approval"]["decision"] == "allow_once"
    assert out["disk_after_allow"] == "goodbye from the fixture\n"

    denied = out["denied"]
    assert denied["isError"] is True
    assert denied["error"]["code"] == "permission.user_denied"
    assert "not this one" in denied["error"]["message"]
    assert out["disk_after_deny"] == "goodbye from the fixture\n"
