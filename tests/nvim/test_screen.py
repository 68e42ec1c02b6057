"""Neovim on a real terminal screen (tmux), read back as a user sees it: while the default
vim.ui.select waits, the approval window at the top shows the whole change (or the
command's details) above the list of choices. The screens are saved under
test-artifacts/nvim/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.conftest import LUA_DIR, PLUGIN_DIR, REPO, Neovim, server_command
from tests.tmux_screen import Tmux, save_screen, terminal, written_json

pytestmark = pytest.mark.real_client

ARTIFACTS = REPO / "test-artifacts" / "nvim"


@pytest.fixture
def tmux(neovim: Neovim) -> Iterator[Tmux]:
    env = {
        "HOME": str(neovim.home),
        "XDG_CONFIG_HOME": str(neovim.home / "config"),
        "XDG_STATE_HOME": str(neovim.home / "state"),
        "XDG_DATA_HOME": str(neovim.home / "data"),
        "TOOLHOST_STATE_DIR": str(neovim.home / "state" / "toolhost"),
        "TOOLHOST_TEST_OUT": str(neovim.home / "screen"),
        "TOOLHOST_TEST_PLUGIN": str(PLUGIN_DIR),
        "TOOLHOST_TEST_WORKSPACE": str(neovim.workspace),
        "TOOLHOST_TEST_CMD": json.dumps(server_command()),
    }
    command = [neovim.program, "--clean", "-u", str(LUA_DIR / "screen_init.lua")]
    with terminal(command, env, neovim.workspace, (110, 40)) as driver:
        yield driver


def result(neovim: Neovim, n: int) -> dict[str, Any]:
    return written_json(neovim.home / f"screen.{n}.json")


def save(name: str, screen: str) -> None:
    save_screen(ARTIFACTS, name, screen)


def test_the_change_is_on_screen_while_the_choice_is_made(neovim: Neovim, tmux: Tmux) -> None:
    edit = tmux.wait_for("the edit approval", lambda s: "Type number and <Enter>" in s)
    save("approval-edit.txt", edit)
    lines = edit.splitlines()
    choices = next(i for i, line in enumerate(lines) if "toolhost: Edit notes.md" in line)
    above = "\n".join(lines[:choices])
    # The whole diff is above the choices, readable before deciding.
    assert "toolhost asks: Edit notes.md  [medium risk]" in above
    assert "-line four" in above
    assert "+line FOUR, edited by the agent" in above
    assert "4: Deny" in edit
    tmux.keys("1", "Enter")
    assert result(neovim, 1)["isError"] is False

    bash = tmux.wait_for("the bash approval", lambda s: "Run outside the sandbox: echo hello" in s)
    save("approval-bash.txt", bash)
    assert "    echo hello > greeting.txt" in bash
    # The summary is wrapped to the window, not cut at its edge: how it runs, to the end.
    how = bash[bash.index("How it runs:") : bash.index("from: Neovim")]
    assert " ".join(how.split()).endswith("the command runs with your full permissions."), bash
    assert f"folder:     {neovim.workspace}" in bash
    assert "timeout:    30 s, then the process group is stopped" in bash
    assert "4: Deny" in bash
    tmux.keys("4", "Enter")
    tmux.wait_for("the reason prompt", lambda s: "Reason for denying" in s)
    tmux.keys("Enter")
    denied = result(neovim, 2)
    assert denied["error"]["code"] == "permission.user_denied"
    assert not (neovim.workspace / "greeting.txt").exists()


def test_nothing_asked_about_is_cut_at_the_window_edge(neovim: Neovim, tmux: Tmux) -> None:
    tmux.wait_for("the edit approval", lambda s: "Type number and <Enter>" in s)
    tmux.keys("1", "Enter")
    tmux.wait_for("the bash approval", lambda s: "Run outside the sandbox: echo hello" in s)
    tmux.keys("4", "Enter")
    tmux.wait_for("the reason prompt", lambda s: "Reason for denying" in s)
    tmux.keys("Enter")

    # The summary is the agent's description: the command's own lines must show all of it.
    wide = tmux.wait_for("the wide command", lambda s: "Print some padding" in s)
    save("approval-wide-command.txt", wide)
    assert "the-end-of-the-command.txt" in wide, wide
    assert "(the command details are shown above)" in wide
    assert "5: Read the whole change first" not in wide
    tmux.keys("4", "Enter")
    tmux.wait_for("the reason prompt", lambda s: "Reason for denying" in s)
    tmux.keys("Enter")
    assert result(neovim, 3)["error"]["code"] == "permission.user_denied"

    # A diff does not wrap: a line cut at the edge is said, and reading it first is offered.
    diff = tmux.wait_for("the wide diff", lambda s: "Write wide.txt" in s and "<Enter>" in s)
    save("approval-wide-diff.txt", diff)
    assert "last_key_at_the_end" not in diff
    assert "it does not fit, read it first" in " ".join(diff.split())
    assert "5: Read the whole change first" in diff
    tmux.keys("5", "Enter")
    notice = tmux.wait_for("the notice", lambda s: "press <CR> in it to decide" in s)
    assert "Press ENTER" not in notice, notice  # the window can be read at once
    tmux.keys("G", "$")
    read = tmux.wait_for("the end of the line", lambda s: "last_key_at_the_end = true }" in s)
    save("approval-wide-diff-read.txt", read)
    tmux.keys("Enter")
    again = tmux.wait_for("the choices again", lambda s: "5: Read the whole change first" in s)
    # Read now: the prompt no longer says it does not fit, read it first.
    assert "it does not fit" not in again and "read in full" in " ".join(again.split()), again
    tmux.keys("4", "Enter")
    tmux.wait_for("the reason prompt", lambda s: "Reason for denying" in s)
    tmux.keys("Enter")
    assert result(neovim, 4)["error"]["code"] == "permission.user_denied"
    assert not (neovim.workspace / "wide.txt").exists()


@pytest.fixture
def tools_screen(neovim: Neovim) -> Iterator[Tmux]:
    env = {
        "HOME": str(neovim.home),
        "XDG_CONFIG_HOME": str(neovim.home / "config"),
        "XDG_STATE_HOME": str(neovim.home / "state"),
        "XDG_DATA_HOME": str(neovim.home / "data"),
        "TOOLHOST_STATE_DIR": str(neovim.home / "state" / "toolhost"),
        "TOOLHOST_TEST_OUT": str(neovim.home / "screen"),
        "TOOLHOST_TEST_PLUGIN": str(PLUGIN_DIR),
        "TOOLHOST_TEST_WORKSPACE": str(neovim.workspace),
        "TOOLHOST_TEST_CMD": json.dumps(server_command()),
    }
    command = [neovim.program, "--clean", "-u", str(LUA_DIR / "screen_tools.lua")]
    with terminal(command, env, neovim.workspace, (110, 40)) as driver:
        yield driver


def test_the_tool_list_is_one_line_a_tool_with_details_on_enter(
    neovim: Neovim, tools_screen: Tmux
) -> None:
    ready = written_json(neovim.home / "screen.ready.json")
    tools_screen.keys(":Toolhost tools", "Enter")
    listing = tools_screen.wait_for("the tool list", lambda s: "edit_file " in s)
    save("tools-list.txt", listing)
    assert "<CR> on a tool" in listing
    tools_screen.keys("/^todo_write", "Enter", "/^read_file", "Enter")
    further = tools_screen.wait_for("read_file's line", lambda s: "\nread_file " in s)
    save("tools-list-further.txt", further)
    lines = {
        line.split()[0]: line
        for line in (listing + further).splitlines()
        if line.strip() and not line.startswith(" ")
    }
    # One line a tool: the mark and the parameter names, not the description.
    read_file = lines["read_file"].split()
    assert read_file[1:3] == ["read-only", "path,"] and {"limit?,", "offset?"} <= set(read_file)
    assert lines["edit_file"].split()[1:] == [
        "writes",
        "path,",
        "old_string,",
        "new_string,",
        "replace_all?",
    ]
    assert lines["todo_write"].split()[1:] == ["read-only", "todos"]  # one label everywhere
    assert "Read a text file" not in listing + further

    tools_screen.keys("Enter")  # on read_file's line
    details = tools_screen.wait_for("read_file in full", lambda s: "Parameters:" in s)
    save("tools-read-file.txt", details)
    assert "read_file  (read-only)" in details
    assert "Read a text file from the workspace." in details
    assert "  path (string, required)" in details
    assert "  limit (integer, optional, at least 1" in details

    # A healthy start: nothing at error level in Neovim's LSP log (the server's stderr
    # lands there as ERROR), and no error on the screen.
    log = Path(ready["log"]).read_text(encoding="utf-8") if Path(ready["log"]).exists() else ""
    assert [line for line in log.splitlines() if "[ERROR]" in line] == [], log[-2000:]
    assert "Error" not in details and "E5108" not in details
