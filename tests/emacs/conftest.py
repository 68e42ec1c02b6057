"""Real Emacs (batch mode) with eglot driving toolhost.el against the real `toolhost serve`.

Each test runs `emacs --batch -Q -l tests/emacs/el/harness.el -l <script>.el` in a fixture
workspace (a git checkout); the script writes what it observed as JSON to
$TOOLHOST_TEST_OUT. Emacs and eglot come from scripts/setup/60-emacs-tmux.sh (Debian
emacs-nox and elpa-eglot); Emacs 29+ has eglot built in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing_part
from tests.nvim.conftest import server_command

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIR = REPO / "extension" / "emacs"
EL_DIR = Path(__file__).resolve().parent / "el"
EMACS_TIMEOUT_SECONDS = 240
EGLOT_PROBE = (
    '(progn (add-to-list (quote package-directory-list) "/usr/share/emacs/site-lisp/elpa")'
    " (package-initialize) (require (quote eglot)))"
)


def find_emacs() -> str | None:
    program = os.environ.get("TOOLHOST_EMACS") or shutil.which("emacs")
    if program is None:
        return None
    probe = subprocess.run(
        [program, "--batch", "-Q", "--eval", EGLOT_PROBE],
        capture_output=True,
        timeout=60,
        check=False,
    )
    return program if probe.returncode == 0 else None


@pytest.fixture(scope="session")
def emacs_program() -> str:
    program = find_emacs()
    if program is None:
        missing_part("Emacs with eglot not found (run scripts/setup/60-emacs-tmux.sh)")
    return program


@dataclass
class Emacs:
    program: str
    workspace: Path
    home: Path

    def environment(self, out_file: Path) -> dict[str, str]:
        """What a test script is told: its home, the package, the workspace, the server."""
        return {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / "config"),
            "XDG_STATE_HOME": str(self.home / "state"),
            "TOOLHOST_STATE_DIR": str(self.home / "state" / "toolhost"),
            "TOOLHOST_TEST_OUT": str(out_file),
            "TOOLHOST_TEST_PACKAGE": str(PACKAGE_DIR),
            "TOOLHOST_TEST_WORKSPACE": str(self.workspace),
            "TOOLHOST_TEST_CMD": json.dumps(server_command()),
        }

    def run(self, script: str, **extra_env: str) -> dict[str, Any]:
        """Run one test script; fail with its error and stderr when it raised."""
        out_file = self.home / f"{script}.json"
        env = {**os.environ, **self.environment(out_file), **extra_env}
        command = [self.program, "--batch", "-Q", "-l", str(EL_DIR / "harness.el")]
        proc = subprocess.run(
            [*command, "-l", str(EL_DIR / f"{script}.el")],
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=EMACS_TIMEOUT_SECONDS,
            check=False,
        )
        out: dict[str, Any] = {}
        if out_file.exists():
            out = json.loads(out_file.read_text(encoding="utf-8"))
        if proc.returncode != 0 or out.get("error") or not out:
            pytest.fail(
                f"emacs script {script} failed (exit {proc.returncode}): {out.get('error')}\n"
                f"stderr:\n{proc.stderr[-4000:]}"
            )
        return out


@pytest.fixture
def emacs(emacs_program: str, tmp_path: Path) -> Emacs:
    """A fixture workspace (a git checkout with notes.txt) and a private home."""
    return make_emacs(emacs_program, tmp_path)


def make_emacs(emacs_program: str, tmp_path: Path) -> Emacs:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=30)
    (workspace / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    return Emacs(emacs_program, workspace, home)
