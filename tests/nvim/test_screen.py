"""Neovim on a real terminal screen (tmux), read back as a user sees it: while the default
vim.ui.select waits, the approval window at the top shows the whole change (or the
command's details) above the list of choices. The screens are saved under
test-artifacts/nvim/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import missing_part
from tests.nvim.conftest import LUA_DIR, PLUGIN_DIR, REPO, Neovim, server_command

pytestmark = pytest.mark.real_client

ARTIFACTS = REPO / "test-artifacts" / "nvim"
WAIT_SECONDS = 120
SIZE = ("-x", "110", "-y", "40")


class Tmux:
    """A tmux server of this test's own (-L socket: never the user's), one session."""

    def __init__(self, program: str, session: str) -> None:
        self.program = program
        self.session = session

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [self.program, "-L", self.session, *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return done.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.session, *keys)

    def wait_for(self, what: str, found: Callable[[str], bool]) -> str:
        deadline = time.monotonic() + WAIT_SECONDS
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if found(screen):
                return screen
            time.sleep(0.2)  # polling the screen: there is no event to wait on
        pytest.fail(f"timed out waiting for {what}; the screen was:\n{screen}")


@pytest.fixture
def tmux(neovim: Neovim) -> Iterator[Tmux]:
    program = shutil.which("tmux")
    if program is None:
        missing_part("tmux not found (run scripts/setup/60-emacs-tmux.sh)")
    session = f"toolhost-{uuid.uuid4().hex[:8]}"
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
    exports = [f"{key}={value}" for key, value in env.items()]
    command = ["env", *exports, neovim.program, "--clean", "-u", str(LUA_DIR / "screen_init.lua")]
    shell = " ".join(f"'{part}'" for part in command)
    driver = Tmux(program, session)
    subprocess.run(
        [program, "-L", session, "new-session", "-d", "-s", session, *SIZE, shell],
        check=True,
        timeout=30,
        cwd=neovim.workspace,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    try:
        yield driver
    finally:
        subprocess.run([program, "-L", session, "kill-server"], check=False, timeout=30)


def result(neovim: Neovim, n: int) -> dict[str, Any]:
    path = neovim.home / f"screen.{n}.json"
    deadline = time.monotonic() + WAIT_SECONDS
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert path.exists(), f"no result {n}"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def save(name: str, screen: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / name).write_text(screen, encoding="utf-8")


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
    tmux.wait_for("the notice", lambda s: "press <CR> in it to decide" in s)
    tmux.keys("Enter")  # past the hit-enter prompt of the notice
    tmux.keys("G", "$")
    read = tmux.wait_for("the end of the line", lambda s: "last_key_at_the_end = true }" in s)
    save("approval-wide-diff-read.txt", read)
    tmux.keys("Enter")
    tmux.wait_for("the choices again", lambda s: "5: Read the whole change first" in s)
    tmux.keys("4", "Enter")
    tmux.wait_for("the reason prompt", lambda s: "Reason for denying" in s)
    tmux.keys("Enter")
    assert result(neovim, 4)["error"]["code"] == "permission.user_denied"
    assert not (neovim.workspace / "wide.txt").exists()
