"""A real terminal for the editor tests: a tmux server of the test's own, one session
running the editor, whose screen is read back as text (tests/nvim, tests/emacs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing_part

WAIT_SECONDS = 120


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


@contextmanager
def terminal(
    command: list[str], env: dict[str, str], cwd: Path, size: tuple[int, int]
) -> Iterator[Tmux]:
    """`command` (with `env` added) running on a terminal of `size` (columns, rows)."""
    program = shutil.which("tmux")
    if program is None:
        missing_part("tmux not found (run scripts/setup/60-emacs-tmux.sh)")
    session = f"toolhost-{uuid.uuid4().hex[:8]}"
    exports = [f"{key}={value}" for key, value in env.items()]
    shell = " ".join(f"'{part}'" for part in ["env", *exports, *command])
    columns, rows = (str(n) for n in size)
    subprocess.run(
        [
            program,
            "-L",
            session,
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            columns,
            "-y",
            rows,
            shell,
        ],
        check=True,
        timeout=30,
        cwd=cwd,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    try:
        yield Tmux(program, session)
    finally:
        subprocess.run([program, "-L", session, "kill-server"], check=False, timeout=30)


def written_json(path: Path) -> dict[str, Any]:
    """The JSON the editor writes to `path` when a call it made ends (waited for until it
    is whole: an editor that writes in place can be read between its open and its write)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return data
        except (FileNotFoundError, json.JSONDecodeError):
            if time.monotonic() >= deadline:
                raise
        time.sleep(0.2)  # the editor writes the file: there is no event to wait on


def save_screen(folder: Path, name: str, screen: str) -> None:
    """Keep a screen as a test artifact."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(screen, encoding="utf-8")
