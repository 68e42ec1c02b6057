"""Real Neovim (headless) driving the toolhost plugin against the real `toolhost serve`.

Each test runs `nvim --headless --clean -l tests/nvim/lua/<script>.lua` in a fixture
workspace; the Lua script writes what it observed as JSON to $TOOLHOST_TEST_OUT and the
test asserts on that. Neovim comes from scripts/setup/40-neovim.sh (.tools/neovim).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing_part

REPO = Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO / "extension" / "nvim"
LUA_DIR = Path(__file__).resolve().parent / "lua"
NVIM_TIMEOUT_SECONDS = 240


def _version_ok(program: str) -> bool:
    """Debian's nvim 0.7 has no vim.lsp.start and no -l: only 0.9+ counts."""
    try:
        probe = subprocess.run(
            [program, "--headless", "--clean", "--cmd", "if !has('nvim-0.9') | cq | endif", "+qa!"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def find_nvim() -> str | None:
    candidates = [
        os.environ.get("TOOLHOST_NVIM"),
        str(REPO / ".tools" / "neovim" / "bin" / "nvim"),
        str(Path(sys.executable).parent / "nvim"),
        shutil.which("nvim"),
    ]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK) and _version_ok(candidate):
            return candidate
    return None


@pytest.fixture(scope="session")
def nvim_program() -> str:
    program = find_nvim()
    if program is None:
        why = "Neovim 0.9+ not found (run scripts/setup/40-neovim.sh or set TOOLHOST_NVIM)"
        missing_part(why)
    return program


def server_command() -> list[str]:
    toolhost = Path(sys.executable).parent / "toolhost"
    if toolhost.exists():
        return [str(toolhost), "serve"]
    return [sys.executable, "-m", "lsp_server.cli", "serve"]


@dataclass
class NvimRun:
    returncode: int
    out: dict[str, Any]
    stderr: str


@dataclass
class Neovim:
    program: str
    workspace: Path
    home: Path

    def run(self, script: str, **env: str) -> NvimRun:
        """Run one Lua test script; fail with its error and stderr when it raised."""
        out_file = self.home / f"{script}.json"
        out_file.unlink(missing_ok=True)
        environment = {
            **os.environ,
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / "config"),
            "XDG_STATE_HOME": str(self.home / "state"),
            "XDG_DATA_HOME": str(self.home / "data"),
            "XDG_CACHE_HOME": str(self.home / "cache"),
            "TOOLHOST_STATE_DIR": str(self.home / "state" / "toolhost"),
            "TOOLHOST_TEST_OUT": str(out_file),
            "TOOLHOST_TEST_PLUGIN": str(PLUGIN_DIR),
            "TOOLHOST_TEST_WORKSPACE": str(self.workspace),
            "TOOLHOST_TEST_CMD": json.dumps(server_command()),
            "TOOLHOST_TEST_HARNESS": str(LUA_DIR / "harness.lua"),
            **env,
        }
        proc = subprocess.run(
            [self.program, "--headless", "--clean", "-l", str(LUA_DIR / f"{script}.lua")],
            cwd=self.workspace,
            env=environment,
            capture_output=True,
            text=True,
            timeout=NVIM_TIMEOUT_SECONDS,
            check=False,
        )
        out: dict[str, Any] = {}
        if out_file.exists():
            out = json.loads(out_file.read_text(encoding="utf-8"))
        if proc.returncode != 0 or out.get("error") or not out:
            pytest.fail(
                f"nvim script {script} failed (exit {proc.returncode}): {out.get('error')}\n"
                f"stderr:\n{proc.stderr[-4000:]}"
            )
        return NvimRun(proc.returncode, out, proc.stderr)


@pytest.fixture
def neovim(nvim_program: str, tmp_path: Path) -> Neovim:
    return make_neovim(nvim_program, tmp_path)


def make_neovim(nvim_program: str, tmp_path: Path) -> Neovim:
    """A fixture workspace (a .git root marker, two text files) and a private home."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ".git").mkdir()  # a root marker, as in a real checkout
    (workspace / "hello.txt").write_text("hello from the fixture\n", encoding="utf-8")
    (workspace / "notes.md").write_text(
        "# Notes\n\nline three\nline four\nline five\n", encoding="utf-8"
    )
    home = tmp_path / "home"
    home.mkdir()
    return Neovim(nvim_program, workspace, home)
