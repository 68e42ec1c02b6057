"""The Neovim plugin in real Neovim: start, commands, API, health, approvals."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.nvim.conftest import PLUGIN_DIR, Neovim

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
    assert out["status_lines"][0].startswith("toolhost ")
    assert "Sessions" in out["status_lines"]
    assert out["jobs_lines"] == ["no background jobs"]
    assert {entry["tool"] for entry in out["activity"]} >= {"read_file"}

    assert out["complete_sub"] == ["start", "status", "stop"]
    assert "read_file" in out["complete_tool"]

    health = "\n".join(out["health_lines"])
    assert "toolhost/status answered" in health
    assert "ERROR" not in health
    # The status view's blank separator lines are not shown as empty findings ("- ").
    assert not [line for line in out["health_lines"] if line.strip() in ("-", "- INFO")], health


def _approval_window(screen: list[dict[str, Any]]) -> dict[str, Any]:
    [window] = [w for w in screen if w["name"].startswith("toolhost://approve/")]
    return window


def test_approval_handler_choices(neovim: Neovim) -> None:
    out = neovim.run("approval_handler").out
    # The diff is on screen, whole, while the picker waits; one prompt, no "Show diff".
    [prompt] = out["once_prompts"]
    assert "Edit notes.md" in prompt
    window = _approval_window(out["once_screens"][0])
    assert window["lines"][0] == "toolhost asks: Edit notes.md  [medium risk]"
    assert "from: Test Chat (session default)" in window["lines"]
    assert "-old" in window["lines"] and "+new" in window["lines"]
    assert out["windows_after"] == 1  # closed once answered
    assert out["once"] == {"decision": "allow_once"}
    assert out["session"] == {"decision": "allow_session", "rule": "edit_file(notes.md)"}
    # The rule the user edited is what the server will persist.
    assert out["always"] == {"decision": "allow_always", "rule": "Edit(docs/**)"}
    assert out["deny"] == {"decision": "deny", "reason": "not now"}
    assert out["dismissed"] == {"decision": "deny", "dismissed": True}

    # bash: the command, its folder, background flag, timeout and sandbox are on screen.
    bash = _approval_window(out["bash_screens"][0])["lines"]
    assert bash[3:6] == ["command:", "    npm test", "    npm run lint"]
    assert f"folder:     {neovim.workspace}/web" in bash
    assert any(line.startswith("background: yes") for line in bash)
    assert any(line.startswith("timeout:    none") for line in bash)
    assert "sandbox:    none" in bash
    assert out["bash"] == {"decision": "allow_once"}

    # Deny has one index for writers and bash alike.
    assert out["once_items"][0].index("Deny") == out["bash_items"][0].index("Deny") == 3

    # A change too long for the window: "read it first" comes after Deny, focuses the
    # window, and the user is asked again.
    assert out["long_items"][0][:4] == out["once_items"][0]
    assert out["long_items"][0][4] == "Read the whole change first"
    assert out["long_focused"].startswith("toolhost://approve/")
    assert out["long"] == {"decision": "allow_once"}
    assert len(out["long_items"]) == 2


def test_approval_from_the_server(neovim: Neovim) -> None:
    out = neovim.run("approval").out
    allowed = out["allowed"]
    assert len(out["prompts"]) == 3
    assert "hello.txt" in out["prompts"][0]
    # While the picker waited, the real diff was on screen.
    edit_window = _approval_window(out["screens"][0])
    assert "-hello from the fixture" in edit_window["lines"]
    assert "+goodbye from the fixture" in edit_window["lines"]
    bash_window = _approval_window(out["screens"][1])
    assert "    touch dismissed.txt" in bash_window["lines"]
    assert f"folder:     {neovim.workspace}" in bash_window["lines"]
    assert "timeout:    120 s, then the process group is stopped" in bash_window["lines"]
    # Deny at the same index for the writer and for bash.
    assert out["items"][0].index("Deny") == out["items"][1].index("Deny")

    assert allowed["isError"] is False, allowed
    assert allowed["meta"]["approval"]["decision"] == "allow_once"
    assert out["disk_after_allow"] == "goodbye from the fixture\n"

    # A dismissed prompt reaches the agent as a dismissal, not as words of the user.
    dismissed = out["dismissed"]
    assert dismissed["error"]["code"] == "permission.user_denied"
    assert "dismissed the approval prompt" in dismissed["error"]["message"]
    assert "said" not in dismissed["error"]["message"]
    assert out["dismissed_ran"] is False

    denied = out["denied"]
    assert denied["isError"] is True
    assert denied["error"]["code"] == "permission.user_denied"
    assert "the user said: not this one" in denied["error"]["message"]
    assert out["disk_after_deny"] == "goodbye from the fixture\n"


def test_help_has_every_toolhost_subcommand_and_no_other(neovim: Neovim) -> None:
    out = neovim.run("help_tags").out
    assert out["missing"] == [], f":help :Toolhost-{{...}} finds nothing for {out['missing']}"
    doc = (PLUGIN_DIR / "doc" / "toolhost.txt").read_text(encoding="utf-8")
    documented = set(re.findall(r"\*:Toolhost-([\w-]+)\*", doc))
    assert documented == set(out["subcommands"])
