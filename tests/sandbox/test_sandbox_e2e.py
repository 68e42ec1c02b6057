"""The sandbox over the wire: `toolhost serve` as a subprocess, real bubblewrap, a client
that plays the editor and answers every approval "deny" (except where a test says)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fake_editor import FakeEditor
from tests.helpers import lsp_call, text_of
from tests.policy.test_policy_e2e import editor_session

pytestmark = pytest.mark.timeout(180)

DENY = {"decision": "deny", "reason": "not in this test"}
CONNECT = "exec 3<>/dev/tcp/127.0.0.1/{port} && head -1 <&3"


def deny_all_but_network(editor: FakeEditor) -> None:
    async def respond(params: dict[str, Any]) -> dict[str, Any]:
        if params["title"].startswith("Run with network access: "):
            return {"decision": "allow_once"}
        return DENY

    editor.script = respond


@pytest.fixture
def repo(workspace: Path, bwrap: str) -> Path:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    return workspace


async def test_default_policy_sandboxed_commands(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback_listener: int
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(home))
    git_config = (repo / ".git" / "config").read_bytes()
    outside = Path("/var/tmp") / f"toolhost-e2e-{tmp_path.name}"
    editor = FakeEditor()
    deny_all_but_network(editor)
    async with editor_session(repo, editor) as client:
        made = await lsp_call(client, "bash", {"command": "echo x > made.txt"})
        refused = {
            target: await lsp_call(client, "bash", {"command": f"echo x >> {target}"})
            for target in (str(outside), "~/.bashrc", ".git/config")
        }
        connect = CONNECT.format(port=loopback_listener)
        unreachable = await lsp_call(client, "bash", {"command": connect})
        assert editor.prompts == []  # nothing so far needed an approval
        reached = await lsp_call(client, "bash", {"command": connect, "sandbox": "network"})

    assert not made["isError"], text_of(made)
    assert made["meta"]["approval"]["decision"] == "allow"
    assert (repo / "made.txt").read_text() == "x\n"
    for target, result in refused.items():
        assert "Read-only file system" in text_of(result), target
        assert "exit code 1" in text_of(result)
    assert not outside.exists()
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert (repo / ".git" / "config").read_bytes() == git_config
    assert "Connection refused" in text_of(unreachable)
    assert "reached" not in text_of(unreachable)

    assert text_of(reached).startswith("reached\n"), text_of(reached)
    assert reached["meta"]["approval"]["decision"] == "allow_once"
    [prompt] = editor.prompts
    assert prompt["title"] == f"Run with network access: {connect}"
    assert "network allowed for this command" in prompt["summary"]


async def test_outside_the_sandbox_asks_and_says_so(repo: Path) -> None:
    editor = FakeEditor()
    editor.script = editor.answer(DENY)
    async with editor_session(repo, editor) as client:
        result = await lsp_call(client, "bash", {"command": "git commit", "sandbox": "off"})
    assert result["error"]["code"] == "permission.user_denied"
    [prompt] = editor.prompts
    assert prompt["title"] == "Run outside the sandbox: git commit"
    assert "outside the sandbox" in prompt["summary"]
    assert "outside the sandbox" in result["error"]["message"]


def _path_without_bwrap(shadow: Path) -> str:
    """PATH with every folder holding bwrap replaced by a copy of it (symlinks) without."""
    shadow.mkdir()
    parts = []
    for index, folder in enumerate(os.environ["PATH"].split(os.pathsep)):
        if not (Path(folder) / "bwrap").exists():
            parts.append(folder)
            continue
        copy = shadow / str(index)
        copy.mkdir()
        for entry in Path(folder).iterdir():
            if entry.name != "bwrap":
                (copy / entry.name).symlink_to(entry)
        parts.append(str(copy))
    return os.pathsep.join(parts)


async def test_without_bubblewrap_every_command_asks_and_says_why(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path / "shadow"))
    editor = FakeEditor()
    editor.script = editor.answer(DENY)
    commands = ["echo x > made.txt", "touch a && ls", "python3 -c 'print(1)'"]
    async with editor_session(workspace, editor) as client:
        denied = [await lsp_call(client, "bash", {"command": c}) for c in commands]
        read = await lsp_call(client, "bash", {"command": "ls"})
    assert [p["arguments"]["command"] for p in editor.prompts] == commands
    why = "no sandbox (bubblewrap (bwrap) is not on PATH"
    for result, prompt in zip(denied, editor.prompts, strict=True):
        assert result["error"]["code"] == "permission.user_denied"
        assert why in result["error"]["message"]
        assert why in prompt["summary"]
    assert not (workspace / "made.txt").exists()
    # A plain read runs without asking; its result says that commands are not sandboxed.
    assert not read["isError"]
    assert f"[{why}" in text_of(read)


async def test_sandbox_off_configured_runs_unsandboxed(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "written-outside"
    editor = FakeEditor()  # answers allow_once
    options = {"shell": {"sandbox": "off"}}
    async with editor_session(repo, editor, options) as client:
        result = await lsp_call(client, "bash", {"command": f"echo x > {outside}"})
    assert not result["isError"], text_of(result)
    assert outside.read_text() == "x\n"
    [prompt] = editor.prompts  # off: no sandbox, so the default policy asks
    assert "sandbox off (configured)" in prompt["summary"]
