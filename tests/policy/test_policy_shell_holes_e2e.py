"""Issue 41 item 6 against a real `toolhost serve`: the issue's own commands, with every
approval answered "deny". Reads that wrote files or printed secrets now ask (and so are
refused); deny rules hold behind `script -c`, globbed program names, `trap` and aliases.
Each test also runs a plain read that must still run unasked, so none can pass by asking
for everything."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import require_program
from tests.helpers import lsp_call, text_of
from tests.policy.test_policy_e2e import editor_session
from tests.policy.test_policy_escapes_e2e import REFUSED, denying_editor, run_each

SECRET = "sk-test-123-not-for-the-model"
LEAKS = [
    "echo .env | xargs cat",
    "xargs cat <<< .env",
    "cat notes.txt",
    "rg KEY notes.txt",
]
WRITES = [
    "uniq in.txt .toolhost.toml",
    "uniq in.txt .git/hooks/pre-commit",
    "sed -ne 'w .toolhost.toml' in.txt",
]


def prepare(workspace: Path) -> None:
    (workspace / ".env").write_text(f"KEY={SECRET}\n")
    os.link(workspace / ".env", workspace / "notes.txt")  # .env under an innocent name
    (workspace / "in.txt").write_text('[shell]\nsandbox = "off"\n')
    (workspace / ".git" / "hooks").mkdir(parents=True)


def sandboxes() -> list[str]:
    return ["off", "workspace-write"] if shutil.which("bwrap") else ["off"]


@pytest.mark.parametrize("sandbox", sandboxes())
async def test_reads_that_write_or_leak_ask_and_are_refused(workspace: Path, sandbox: str) -> None:
    require_program("rg", "rg KEY notes.txt is one of the issue's commands")
    prepare(workspace)
    editor = denying_editor()
    commands = [*LEAKS, *WRITES] if sandbox == "off" else LEAKS
    async with editor_session(workspace, editor, {"shell": {"sandbox": sandbox}}) as client:
        control = await lsp_call(client, "bash", {"command": "uniq in.txt && cat README.md"})
        results = await run_each(client, commands)
    assert not control["isError"], text_of(control)
    assert "sandbox" in text_of(control)
    assert control["meta"]["approval"]["rule"] is None
    for command, result in results.items():
        assert result["isError"], (command, text_of(result))
        assert result["error"]["code"] in REFUSED, (command, result["error"])
        assert SECRET not in text_of(result), command
    assert not (workspace / ".toolhost.toml").exists()
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    asked = {p["arguments"]["command"]: p["summary"] for p in editor.prompts}
    assert set(asked) == set(commands)
    assert "hard link" in asked["cat notes.txt"] and ".env" in asked["cat notes.txt"]
    assert "xargs" in asked["xargs cat <<< .env"]


DENIED_UNSEEN = [
    "script -qc 'touch X'",
    "script --command 'touch X' /dev/null",
    "/usr/bin/tou[c]h X",
    "/usr/bin/touc? X",
    "trap 'touch X' EXIT",
    "bash -c 'shopt -s expand_aliases; alias t=touch; t X'",
    "flock -nc 'touch X' lock",
    "env -vS 'touch X'",
    "coproc touch X",
    "env 'BASH_FUNC_ls%%=() { touch X; }' bash -c ls",
    "hash -p /usr/bin/touch t; t X",
]


async def test_a_deny_rule_holds_behind_script_globs_trap_and_aliases(workspace: Path) -> None:
    editor = denying_editor()
    options = {
        "policy": {"mode": "bypass", "deny": ["bash(touch:*)"]},
        "shell": {"sandbox": "off"},
    }
    async with editor_session(workspace, editor, options) as client:
        control = await lsp_call(client, "bash", {"command": "mkdir made && ls made"})
        results = await run_each(client, DENIED_UNSEEN)
    assert not control["isError"], text_of(control)
    for command, result in results.items():
        assert result["isError"], (command, text_of(result))
        assert result["error"]["code"] in REFUSED, (command, result["error"])
    assert not (workspace / "X").exists()
    denied = {c for c, r in results.items() if r["error"]["code"] == "permission.rule_denied"}
    assert "script -qc 'touch X'" in denied and "trap 'touch X' EXIT" in denied
