"""The Neovim plugin in real Neovim: start, commands, API, health, approvals."""

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

    assert out["complete_sub"] == ["start", "status", "stop"]
    assert "read_file" in out["complete_tool"]

    health = "\n".join(out["health_lines"])
    assert "toolhost/status answered" in health
    assert "ERROR" not in health


def test_approval_handler_choices(neovim: Neovim) -> None:
    out = neovim.run("approval_handler").out
    # "Show diff" opened the diff in a scratch split, then the user was asked again.
    assert len(out["once_prompts"]) == 2
    assert "Edit notes.md" in out["once_prompts"][0]
    assert "[medium risk]" in out["once_prompts"][0]
    assert "Show diff" in out["once_items"][0]
    assert "+new" in out["diff_lines"]
    assert out["once"] == {"decision": "allow_once"}
    assert out["session"] == {"decision": "allow_session", "rule": "edit_file(notes.md)"}
    # The rule the user edited is what the server will persist.
    assert out["always"] == {"decision": "allow_always", "rule": "Edit(docs/**)"}
    assert out["deny"] == {"decision": "deny", "reason": "not now"}
    assert out["dismissed"]["decision"] == "deny"
    assert "Show diff" not in out["no_diff_items"]


def test_approval_from_the_server(neovim: Neovim) -> None:
    out = neovim.run("approval").out
    allowed = out["allowed"]
    assert len(out["prompts"]) == 3
    assert "Show diff" in out["items"][0]
    assert any(line.startswith("+goodbye") for line in out["diff_lines"])
    assert "hello.txt" in out["prompts"][0]

    assert allowed["isError"] is False, allowed
    assert allowed["meta"]["approval"]["decision"] == "allow_once"
    assert out["disk_after_allow"] == "goodbye from the fixture\n"

    denied = out["denied"]
    assert denied["isError"] is True
    assert denied["error"]["code"] == "permission.user_denied"
    assert "not this one" in denied["error"]["message"]
    assert out["disk_after_deny"] == "goodbye from the fixture\n"
