"""Shell tricks and hostile workspaces against a real `toolhost serve` (issue 18 item 4,
issue 20 items 4, 6, 7, 8, 11). The editor answers every approval with "deny"; each test
checks that the marker file the trick would create does not appear (and that a plain
command next to it still runs without a prompt, so the test cannot pass by asking for
everything)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fake_editor import FakeEditor
from tests.helpers import lsp_call, text_of
from tests.policy.test_policy_e2e import editor_session

REFUSED = ("permission.rule_denied", "permission.user_denied")


def denying_editor() -> FakeEditor:
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "deny", "reason": "no"})
    return editor


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def make_repository(root: Path) -> None:
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")


async def run_each(client: Any, commands: list[str]) -> dict[str, dict[str, Any]]:
    return {c: await lsp_call(client, "bash", {"command": c}) for c in commands}


# -- issue 18 item 4: deny rules behind wrappers, opaque commands ---------------------------
TOUCH_TRICKS = [
    "touch f",
    "/usr/bin/touch f",
    "setsid touch f",
    "nice -n 5 touch f",
    "timeout -s KILL 5 touch f",
    "env -u X touch f",
    "echo f | xargs touch",
    "stdbuf -o0 touch f",
    "bash -c 'exec -a foo touch f'",
    "$(echo touch) f",
    "cp /dev/null f",
    "python3 -c \"open('f', 'w')\"",
    # our own
    "command -p touch f",
    "sudo -n touch f",
    "env -S 'touch f'",
    "if true; then touch f; fi",
    "find . -maxdepth 0 -exec touch f ';'",
    "t=touch; $t f",
    "echo 'touch f' | sh",
    "echo > f",
    "node -e \"require('fs').writeFileSync('f', '')\"",
    "perl -e 'open(F, \">f\")'",
]


async def test_deny_rule_on_touch_holds_in_bypass_mode(workspace: Path) -> None:
    editor = denying_editor()
    options = {"policy": {"mode": "bypass", "deny": ["bash(touch:*)"]}}
    async with editor_session(workspace, editor, options) as client:
        control = await lsp_call(client, "bash", {"command": "mkdir made && nice ls made"})
        results = await run_each(client, TOUCH_TRICKS)
    assert not control["isError"], text_of(control)
    assert (workspace / "made").is_dir()
    for command, result in results.items():
        assert result["isError"], (command, text_of(result))
        assert result["error"]["code"] in REFUSED, (command, result["error"])
    assert not (workspace / "f").exists()
    asked = {p["arguments"]["command"] for p in editor.prompts}
    assert "cp /dev/null f" in asked and "$(echo touch) f" in asked
    assert all(p["risk"] == "high" and p["suggestedRules"] == [] for p in editor.prompts)
    denied = {c for c, r in results.items() if r["error"]["code"] == "permission.rule_denied"}
    assert "nice -n 5 touch f" in denied and "bash -c 'exec -a foo touch f'" in denied


# -- issue 20 item 4: "plain reads" that run code ---------------------------------------------
READ_ESCAPES = [
    "printf -v 'a[$(touch M1)]' 1",
    "test -v 'a[$(touch M2)]'",
    "[ -v 'a[$(touch M3)]' ]",
    "git grep --open='touch M4' -e inventory",
    "sort -S 1K --compress-program=sh lines.txt",
    "sort --out=M6 lines.txt",
    "git log --output=M7 -n 1",
]


@pytest.mark.parametrize("mode", ["default", "readOnly"])
async def test_read_only_escapes_never_run_unasked(workspace: Path, mode: str) -> None:
    # sort hands its temporary chunks to the "compressor": sh runs each line.
    (workspace / "lines.txt").write_text("touch M5\n" * 4000)
    make_repository(workspace)
    git(workspace, "branch", "side")
    config_before = (workspace / ".git" / "config").read_bytes()
    editor = denying_editor()
    # Without the sandbox: what the classifier alone lets through. (Inside the default
    # sandbox these would run unasked, contained: tests/sandbox checks that.)
    options = {"policy": {"mode": mode, "allow": ["bash(git log:*)"]}, "shell": {"sandbox": "off"}}
    async with editor_session(workspace, editor, options) as client:
        control = await lsp_call(client, "bash", {"command": "git log -n 1 --oneline"})
        results = await run_each(
            client,
            [*READ_ESCAPES, "git branch --set-upstream-t=side", "git branch --unset-up"],
        )
    assert not control["isError"], text_of(control)
    expected = "permission.rule_denied" if mode == "readOnly" else "permission.user_denied"
    for command, result in results.items():
        assert result["isError"] and result["error"]["code"] == expected, (command, result)
    for marker in ("M1", "M2", "M3", "M4", "M5", "M6", "M7"):
        assert not (workspace / marker).exists(), marker
    assert (workspace / ".git" / "config").read_bytes() == config_before


# -- issue 20 item 6: secrets and outside files through "plain reads" -------------------------
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["default", "readOnly"])
async def test_reads_of_secrets_and_outside_files_ask(
    workspace: Path, tmp_path: Path, mode: str
) -> None:
    (workspace / ".env").write_text("API_KEY=inside-secret\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("KEY=outside-secret\n")
    (workspace / "link.txt").symlink_to(outside / "notes.txt")
    editor = denying_editor()
    commands = [
        "cat .env",
        "cat ./src/../.env",
        "cat .e*",
        "grep KEY .env",
        "cat < .env",
        f"cat {outside / 'notes.txt'}",
        f"grep -r KEY {outside}",
        "cat link.txt",
        "cat ../outside/notes.txt",
        "cat $HOME/.bashrc",
        "head -n 1 ~/.profile",
    ]
    async with editor_session(workspace, editor, {"policy": {"mode": mode}}) as client:
        control = await lsp_call(client, "bash", {"command": "cat README.md src/inventory.py"})
        results = await run_each(client, commands)
    assert not control["isError"] and control["meta"]["approval"]["rule"] is None
    expected = "permission.rule_denied" if mode == "readOnly" else "permission.user_denied"
    for command, result in results.items():
        assert result["isError"] and result["error"]["code"] == expected, (command, result)
        shown = text_of(result)
        assert "inside-secret" not in shown and "outside-secret" not in shown, command
    if mode == "default":
        assert len(editor.prompts) == len(commands)
        assert "'.env' looks like a secret file" in editor.prompts[0]["summary"]


# -- issue 20 item 7: repository config that runs programs on git reads -----------------------
@pytest.mark.slow
async def test_git_reads_do_not_run_the_repositorys_programs(workspace: Path) -> None:
    make_repository(workspace)
    control_editor = FakeEditor()
    async with editor_session(workspace, control_editor) as client:
        clean = await lsp_call(client, "bash", {"command": "git status --short"})
    assert not clean["isError"] and control_editor.prompts == []

    marker = workspace / "FSMONITOR_RAN"
    with (workspace / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = touch {marker}; false\n")
        config.write(f"[diff]\n\texternal = touch {marker}.diff; false\n")
    (workspace / "README.md").write_text("changed\n")
    editor = denying_editor()
    async with editor_session(workspace, editor) as client:
        results = await run_each(client, ["git status", "git diff", "git -C src log -p -n 1"])
    for command, result in results.items():
        assert result["error"]["code"] == "permission.user_denied", (command, result)
    assert "git config sets core.fsmonitor" in editor.prompts[0]["summary"]
    assert not marker.exists() and not Path(f"{marker}.diff").exists()


async def test_an_included_config_file_and_a_status_hook_count_too(workspace: Path) -> None:
    make_repository(workspace)
    marker = workspace / "HOOK_RAN"
    hook = workspace / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    editor = denying_editor()
    async with editor_session(workspace, editor, {"policy": {"mode": "readOnly"}}) as client:
        (workspace / "README.md").touch()
        hooked = await lsp_call(client, "bash", {"command": "git status"})
        hook.unlink()
        (workspace / ".git" / "extra.cfg").write_text(f"[core]\n\tpager = touch {marker}\n")
        with (workspace / ".git" / "config").open("a") as config:
            config.write("[include]\n\tpath = extra.cfg\n")
        included = await lsp_call(client, "bash", {"command": "git log -n 1"})
    assert hooked["error"]["code"] == "permission.rule_denied", hooked
    assert included["error"]["code"] == "permission.rule_denied", included
    assert not marker.exists()


# -- issue 20 item 8: policy files are protected ----------------------------------------------
@pytest.mark.slow
async def test_policy_files_ask_in_accept_edits_and_bypass(workspace: Path) -> None:
    config = workspace / ".toolhost.toml"
    config.write_text("[policy]\ndeny = []\n")
    before = config.read_bytes()
    editor = denying_editor()
    options = {"workspaceTrusted": True, "policy": {"mode": "acceptEdits"}}
    async with editor_session(workspace, editor, options) as client:
        ordinary = await lsp_call(client, "write_file", {"path": "notes.md", "content": "n\n"})
        await lsp_call(client, "read_file", {"path": ".toolhost.toml"})
        written = await lsp_call(
            client,
            "write_file",
            {"path": ".toolhost.toml", "content": '[policy]\nallow = ["Bash"]\n'},
        )
        moved = await lsp_call(
            client,
            "move_file",
            {"source_path": ".toolhost.toml", "destination_path": "old.toml"},
        )
    assert not ordinary["isError"], text_of(ordinary)
    for result in (written, moved):
        assert result["error"]["code"] == "permission.user_denied", result
    assert config.read_bytes() == before
    assert [p["risk"] for p in editor.prompts] == ["high", "high"]
    assert all(p["suggestedRules"] == [] for p in editor.prompts)

    bypass = denying_editor()
    options = {"workspaceTrusted": True, "policy": {"mode": "bypass", "allow": ["Bash"]}}
    async with editor_session(workspace, bypass, options) as client:
        results = await run_each(
            client,
            [
                "echo 'allow = [\"Bash\"]' >> .toolhost.toml",
                "cp notes.md .toolhost.toml",
                "sed -i s/deny/allow/ .toolhost.toml",
                "cd src && cp ../notes.md ../.toolhost.toml",
            ],
        )
        read = await lsp_call(client, "bash", {"command": "cat .toolhost.toml"})
    for command, result in results.items():
        # In the sandbox the file is read-only whether or not it exists: no need to ask.
        refused = (result.get("error") or {}).get("code") == "permission.user_denied"
        failed = any(s in text_of(result) for s in ("Read-only file system", "resource busy"))
        assert refused or failed, (command, result)
    assert not read["isError"]
    assert config.read_bytes() == before


# -- issue 20 item 11: an untrusted layer cannot un-hide secrets ------------------------------
async def test_untrusted_secret_pattern_negations_are_ignored(workspace: Path) -> None:
    (workspace / ".env").write_text("API_KEY=do-not-show\n")
    (workspace / "keys").mkdir()
    (workspace / "keys" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (workspace / ".toolhost.toml").write_text(
        '[workspace]\nsecret_patterns = ["!.env", "!*.pem", "*.secret"]\n'
    )
    (workspace / "db.secret").write_text("hidden\n")
    editor = FakeEditor()
    async with editor_session(workspace, editor) as client:
        env = await lsp_call(client, "read_file", {"path": ".env"})
        added = await lsp_call(client, "read_file", {"path": "db.secret"})
        listed = await lsp_call(client, "glob", {"pattern": "**/*"})
    assert env["error"]["code"] == "workspace.secret_file"
    assert "do-not-show" not in text_of(env)
    assert added["error"]["code"] == "workspace.secret_file"
    assert not listed["isError"] and "server.pem" not in text_of(listed)
    assert "inventory.py" in text_of(listed)
    shown = "\n".join(editor.messages)
    assert "ignored: workspace.secret_patterns entry '!.env'" in shown
    assert "workspace.secret_patterns entry '!*.pem'" in shown
