"""toolhost.el in real Emacs on a real terminal (`emacs -nw` in tmux): the approval
prompt as a user meets it, answered with keys, the screen read back. The screens are
saved under test-artifacts/emacs/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.emacs.conftest import EL_DIR, REPO, Emacs
from tests.tmux_screen import Tmux, save_screen, terminal, written_json

pytestmark = pytest.mark.real_client

ARTIFACTS = REPO / "test-artifacts" / "emacs"


@pytest.fixture
def tmux(emacs: Emacs) -> Iterator[Tmux]:
    command = [emacs.program, "-nw", "-Q", "-l", str(EL_DIR / "screen_init.el")]
    env = emacs.environment(emacs.home / "screen")
    with terminal(command, env, emacs.workspace, (80, 24)) as driver:
        yield driver


def result(emacs: Emacs, n: int) -> dict[str, Any]:
    return written_json(emacs.home / f"screen.{n}.json")


def unwrapped(screen: str) -> str:
    """The screen with Emacs's continuation marks (a `\\` at the last column) joined."""
    return screen.replace("\\\n", "")


def save(name: str, screen: str) -> None:
    save_screen(ARTIFACTS, name, screen)


def test_c_g_at_the_approval_prompt_denies_it_as_dismissed(emacs: Emacs, tmux: Tmux) -> None:
    # The prompt and the diff above it: Emacs writes the echo area at once and the windows
    # at its next redisplay, so a screen between the two shows the prompt alone.
    prompt = tmux.wait_for(
        "the approval prompt below its diff",
        lambda s: (
            "toolhost: Write made.txt (the change is above) (once," in unwrapped(s) and "+made" in s
        ),
    )
    save("approval-c-g.txt", prompt)
    tmux.keys("C-g")
    denied = result(emacs, 1)
    assert denied["error"]["code"] == "permission.user_denied", denied
    assert "dismissed the approval prompt" in denied["error"]["message"]
    assert not (emacs.workspace / "made.txt").exists()


def test_details_that_do_not_fit_on_screen_can_be_read_first(emacs: Emacs, tmux: Tmux) -> None:
    tmux.wait_for("the write approval", lambda s: "Write made.txt" in unwrapped(s))
    tmux.keys("d")
    tmux.wait_for("the reason prompt", lambda s: "Reason for denying" in s)
    tmux.keys("C-g")  # no reason after all: the user still chose Deny, not "dismissed"
    denied = result(emacs, 1)
    assert denied["error"]["code"] == "permission.user_denied"
    assert "dismissed" not in denied["error"]["message"], denied

    # The wrapped lines take more rows than the window (and the long prompt takes three
    # rows of the echo area): the last details are off screen, so reading first is offered.
    asked = tmux.wait_for("the bash approval", lambda s: "Print some padding" in unwrapped(s))
    save("approval-long-command.txt", asked)
    assert "sandbox:    none" not in asked
    assert "deny, view, ?)" in unwrapped(asked), asked
    tmux.keys("v")
    tmux.wait_for("the window to read", lambda s: "C-M-c to decide" in s)
    tmux.keys("M->")
    read = tmux.wait_for("the end of the details", lambda s: "sandbox:    none" in s)
    save("approval-long-command-read.txt", read)
    assert "the-end-of-the-command.txt" in unwrapped(read)
    tmux.keys("C-M-c")
    tmux.wait_for("the prompt again", lambda s: "deny, view, ?)" in unwrapped(s))
    tmux.keys("d")
    tmux.wait_for("the reason prompt", lambda s: "Reason for denying" in s)
    tmux.keys("Enter")
    assert result(emacs, 2)["error"]["code"] == "permission.user_denied"
    assert not (emacs.workspace / "the-end-of-the-command.txt").exists()


@pytest.fixture
def tools_screen(emacs: Emacs) -> Iterator[Tmux]:
    command = [emacs.program, "-nw", "-Q", "-l", str(EL_DIR / "screen_tools.el")]
    env = emacs.environment(emacs.home / "screen")
    with terminal(command, env, emacs.workspace, (100, 40)) as driver:
        yield driver


def test_the_tool_list_is_one_line_a_tool_with_details_on_ret(
    emacs: Emacs, tools_screen: Tmux
) -> None:
    written_json(emacs.home / "screen.ready.json")
    tools_screen.keys("M-x", "toolhost-tools", "Enter")
    listing = tools_screen.wait_for("the tool list", lambda s: "edit_file " in s)
    save("tools-list.txt", listing)
    assert "RET on a tool" in listing
    tools_screen.keys("C-s", "todo_write", "Enter")
    further = tools_screen.wait_for("todo_write's line", lambda s: "\ntodo_write " in s)
    save("tools-list-further.txt", further)
    lines = {
        line.split()[0]: line for line in unwrapped(listing + further).splitlines() if line.strip()
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

    tools_screen.keys("C-r", "read_file", "Enter", "Enter")  # RET on read_file's line
    details = tools_screen.wait_for("read_file in full", lambda s: "Parameters:" in s)
    save("tools-read-file.txt", details)
    assert "read_file  (read-only)" in details
    assert "Read a text file from the workspace." in details
    assert "  path (string, required)" in details
    assert "  limit (integer, optional, at least 1" in details

    # A healthy start: the server wrote nothing to stderr (clients show it as errors) and
    # Emacs showed no error.
    tools_screen.keys("M-x", "th-report", "Enter")
    report = written_json(emacs.home / "screen.report.json")
    assert report["stderr"].strip() == "", report["stderr"][-2000:]
    assert "error" not in report["messages"].lower(), report["messages"]
