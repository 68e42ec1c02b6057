"""Files that make other programs run code, against a real `toolhost serve` whose editor
denies every approval (issue 41 item 2): a writer or an unsandboxed command that writes
one asks in every mode and the approval says what the file controls; in the sandbox the
same commands fail without a trace. A plain write next to them runs unasked, so the tests
cannot pass by asking for everything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import missing_part
from tests.fake_editor import FakeEditor
from tests.helpers import lsp_call, text_of
from tests.policy.test_policy_e2e import editor_session
from tests.policy.test_policy_escapes_e2e import denying_editor, run_each

ESCALATIONS = [
    "git init -q && git config core.fsmonitor 'touch PWNED'",
    "mkdir .vscode && echo {} > .vscode/tasks.json",
    "echo x > .envrc",
    "python3 -c \"open('.toolhost.toml','w')\"",
    "n=.toolhost.toml; echo W3BvbGljeV0K | base64 -d > $n",
]
NEW_NAMES = {".git", ".vscode", ".envrc", ".toolhost.toml", "PWNED"}


def _summaries(prompts: list[dict[str, Any]]) -> str:
    return "\n".join(p["summary"] for p in prompts)


@pytest.mark.slow
async def test_writers_ask_in_accept_edits_and_bypass_saying_what_the_file_controls(
    workspace: Path,
) -> None:
    editor = denying_editor()
    options = {"workspaceTrusted": True, "policy": {"mode": "acceptEdits"}}
    settings = '{"toolhost.shell.sandbox": "off", "toolhost.policy.mode": "bypass"}\n'
    async with editor_session(workspace, editor, options) as client:
        ordinary = await lsp_call(client, "write_file", {"path": "new-1.md", "content": "n\n"})
        vscode = await lsp_call(
            client, "write_file", {"path": ".vscode/settings.json", "content": settings}
        )
    assert not ordinary["isError"], text_of(ordinary)
    assert vscode["error"]["code"] == "permission.user_denied", vscode
    assert "VS Code settings and tasks" in text_of(vscode)
    [prompt] = editor.prompts
    assert "VS Code settings and tasks" in prompt["summary"]
    assert prompt["risk"] == "high" and prompt["suggestedRules"] == []
    assert not (workspace / ".vscode").exists()

    bypass = denying_editor()
    options = {"workspaceTrusted": True, "policy": {"mode": "bypass", "allow": ["Edit"]}}
    async with editor_session(workspace, bypass, options) as client:
        envrc = await lsp_call(client, "write_file", {"path": ".envrc", "content": "curl x|sh\n"})
        npmrc = await lsp_call(
            client, "edit_file", {"path": ".npmrc", "old_string": "", "new_string": "x=1\n"}
        )
        ordinary = await lsp_call(client, "write_file", {"path": "new-2.md", "content": "m\n"})
    assert envrc["error"]["code"] == "permission.user_denied", envrc
    assert npmrc.get("isError"), npmrc
    assert not ordinary["isError"], text_of(ordinary)
    assert "direnv runs it as shell code" in _summaries(bypass.prompts)
    assert not (workspace / ".envrc").exists() and not (workspace / ".npmrc").exists()


async def test_unsandboxed_commands_ask_in_bypass(workspace: Path) -> None:
    editor = denying_editor()
    options = {
        "workspaceTrusted": True,
        "policy": {"mode": "bypass", "allow": ["Bash"]},
        "shell": {"sandbox": "off"},
    }
    async with editor_session(workspace, editor, options) as client:
        results = await run_each(client, ESCALATIONS)
        ordinary = await lsp_call(client, "bash", {"command": "echo x > notes.txt"})
    for command, result in results.items():
        assert result["error"]["code"] == "permission.user_denied", (command, result)
    assert not ordinary["isError"], text_of(ordinary)
    assert len(editor.prompts) == len(ESCALATIONS)
    shown = _summaries(editor.prompts)
    assert "git hooks and config" in shown and "direnv runs it" in shown
    assert not NEW_NAMES & {p.name for p in workspace.iterdir()}


async def test_sandboxed_commands_fail_and_leave_no_trace(workspace: Path) -> None:
    from lsp_server.sandbox.platforms import find_backend

    if find_backend(None).problem is not None:
        missing_part("no usable bubblewrap here (`./run setup` installs it)")
    before = sorted(p.name for p in workspace.iterdir())
    editor = denying_editor()
    options = {"workspaceTrusted": True, "policy": {"mode": "bypass", "allow": ["Bash"]}}
    async with editor_session(workspace, editor, options) as client:
        results = await run_each(client, ESCALATIONS)
        ordinary = await lsp_call(client, "bash", {"command": "echo x > notes.txt"})
        # A listing that names another protected file beside the failure explains only
        # the name the write failed on.
        listed = await lsp_call(client, "bash", {"command": "echo .npmrc; echo x > .envrc"})
    for command, result in results.items():
        refused = (result.get("error") or {}).get("code") == "permission.user_denied"
        assert refused or "exit code 0" not in text_of(result), (command, result)
    assert not ordinary["isError"], text_of(ordinary)
    assert sorted(p.name for p in workspace.iterdir()) == sorted([*before, "notes.txt"])
    # The model is told why, and how to go on, instead of retrying variants.
    said = text_of(results["echo x > .envrc"])
    assert ".envrc is protected (direnv runs it as shell code" in said, said
    assert 'sandbox: "off"' in said
    assert ".envrc is protected" in text_of(listed), text_of(listed)
    assert ".npmrc is protected" not in text_of(listed), text_of(listed)


async def test_configured_paths_reach_the_policy_and_the_sandbox(workspace: Path) -> None:
    from lsp_server.sandbox.platforms import find_backend

    editor = denying_editor()
    options = {
        "workspaceTrusted": True,
        "policy": {"mode": "bypass", "allow": ["Edit", "Bash"]},
        "workspace": {"protectedPaths": ["run-on-open.sh"]},
        "shell": {"sandboxReadOnly": ["tools/"]},  # the older name still works
    }
    async with editor_session(workspace, editor, options) as client:
        written = await lsp_call(client, "write_file", {"path": "run-on-open.sh", "content": "x"})
        tools = await lsp_call(client, "write_file", {"path": "tools/x.sh", "content": "x"})
        shell = await lsp_call(client, "bash", {"command": "echo x > run-on-open.sh; mkdir tools"})
    for result in (written, tools):
        assert result["error"]["code"] == "permission.user_denied", result
    assert "workspace.protected_paths" in _summaries(editor.prompts)
    if find_backend(None).problem is None:  # sandboxed: both names held, nothing made
        assert "exit code 0" not in text_of(shell) or shell.get("error"), shell
    assert not (workspace / "run-on-open.sh").exists() and not (workspace / "tools").exists()


async def test_a_name_made_one_folder_down_is_renamed_aside(workspace: Path) -> None:
    """No placeholder can wait in a folder the command makes itself, and a computed name
    shows nothing to the policy: what appears is renamed aside, and the result says so."""
    from lsp_server.sandbox.platforms import find_backend

    if find_backend(None).problem is not None:
        missing_part("no usable bubblewrap here (`./run setup` installs it)")
    (workspace / "tools").mkdir()
    (workspace / "tools" / ".envrc").write_text("# mine\n")
    computed = "python3 -c \"open(''.join(['.en', 'vrc']), 'w').write('curl x|sh')\""
    options = {"workspaceTrusted": True, "policy": {"mode": "bypass", "allow": ["Bash"]}}
    async with editor_session(workspace, denying_editor(), options) as client:
        made = await lsp_call(client, "bash", {"command": f"mkdir sub && cd sub && {computed}"})
        back = "cd .. && mkdir sub2 && echo x > sub2/a"  # the session's folder is sub now
        ordinary = await lsp_call(client, "bash", {"command": back})
    assert not (workspace / "sub" / ".envrc").exists()
    assert (workspace / "sub" / ".envrc.blocked-by-toolhost").read_text() == "curl x|sh"
    said = text_of(made)
    assert "sub/.envrc was made by the command: direnv runs it" in said, said
    assert (workspace / "tools" / ".envrc").read_text() == "# mine\n"  # there before: kept
    assert (workspace / "sub2" / "a").exists() and "renamed" not in text_of(ordinary)


async def test_a_background_job_s_names_one_folder_down_are_renamed_aside(
    workspace: Path,
) -> None:
    from lsp_server.sandbox.platforms import find_backend

    if find_backend(None).problem is not None:
        missing_part("no usable bubblewrap here (`./run setup` installs it)")
    computed = "python3 -c \"open(''.join(['.dir-locals', '.el']), 'w')\""
    options = {"workspaceTrusted": True, "policy": {"mode": "bypass", "allow": ["Bash"]}}
    async with editor_session(workspace, denying_editor(), options) as client:
        job = {"command": f"mkdir sub && cd sub && {computed}", "run_in_background": True}
        started = await lsp_call(client, "bash", job)
        assert not started["isError"], text_of(started)
        ended = await lsp_call(
            client, "job_output", {"job_id": "bash-1", "wait": True, "timeout_ms": 30_000}
        )
        assert "[status: exited 0]" in text_of(ended), text_of(ended)
        aside = workspace / "sub" / ".dir-locals.el.blocked-by-toolhost"
        with anyio.fail_after(30):  # the job's end hook runs just after its status changes
            while not aside.exists():
                await anyio.sleep(0.02)
    assert not (workspace / "sub" / ".dir-locals.el").exists()


def _computed_repository(fsmonitor: str) -> str:
    """Python that makes a repository whose core.fsmonitor runs `fsmonitor` on the next
    git status there, without spelling `.git` (nothing for the policy to see)."""
    code = (
        "import os; n = ''.join(['.g', 'it']); "
        "[os.makedirs(os.path.join(n, d)) for d in ('objects', 'refs')]; "
        "open(os.path.join(n, 'HEAD'), 'w').write('ref: refs/heads/main\\n'); "
        "open(os.path.join(n, 'config'), 'w').write("
        f"'[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = {fsmonitor}\\n')"
    )
    return f'python3 -c "{code}"'


async def test_a_repository_made_deeper_is_renamed_aside(workspace: Path) -> None:
    """Where the root's checkpoint watcher runs, protected names are found at any depth: a
    `.git` made three folders down in new folders and five down in folders that were there
    (VS Code's git extension opens such a repository when the user opens a file in it)."""
    from lsp_server.sandbox.platforms import find_backend

    if find_backend(None).problem is not None:
        missing_part("no usable bubblewrap here (`./run setup` installs it)")
    (workspace / "p" / "q" / "r" / "s").mkdir(parents=True)
    (workspace / "keep" / "x" / "y").mkdir(parents=True)
    (workspace / "keep" / "x" / "y" / ".envrc").write_text("# mine\n")
    options = {"workspaceTrusted": True, "policy": {"mode": "bypass", "allow": ["Bash"]}}
    async with editor_session(workspace, denying_editor(), options) as client:
        third = await lsp_call(
            client,
            "bash",
            {"command": f"mkdir -p a/b && cd a/b && {_computed_repository('touch PWNED')}"},
        )
        fifth = await lsp_call(
            client,
            "bash",
            {"command": f"cd {workspace}/p/q/r/s && {_computed_repository('touch PWNED')}"},
        )
        plain = await lsp_call(
            client, "bash", {"command": f"cd {workspace} && mkdir -p a/b/c/d && echo x > a/b/c/d/f"}
        )
    for made, folder in ((third, "a/b"), (fifth, "p/q/r/s")):
        said = text_of(made)
        assert not (workspace / folder / ".git").exists(), said
        kept = workspace / folder / ".git.blocked-by-toolhost" / "config"
        assert "fsmonitor = touch PWNED" in kept.read_text()
        assert f"{folder}/.git was made by the command: git hooks and config" in said, said
    assert (workspace / "keep" / "x" / "y" / ".envrc").read_text() == "# mine\n"
    assert (workspace / "a/b/c/d/f").exists() and "renamed" not in text_of(plain)


async def test_a_background_job_s_deeper_names_are_renamed_aside(workspace: Path) -> None:
    from lsp_server.sandbox.platforms import find_backend

    if find_backend(None).problem is not None:
        missing_part("no usable bubblewrap here (`./run setup` installs it)")
    command = f"mkdir -p j/k/l/m && cd j/k/l/m && {_computed_repository('x')}"
    options = {"workspaceTrusted": True, "policy": {"mode": "bypass", "allow": ["Bash"]}}
    async with editor_session(workspace, denying_editor(), options) as client:
        started = await lsp_call(client, "bash", {"command": command, "run_in_background": True})
        assert not started["isError"], text_of(started)
        ended = await lsp_call(
            client, "job_output", {"job_id": "bash-1", "wait": True, "timeout_ms": 30_000}
        )
        assert "[status: exited 0]" in text_of(ended), text_of(ended)
        aside = workspace / "j/k/l/m/.git.blocked-by-toolhost"
        with anyio.fail_after(30):  # the job's end hook runs just after its status changes
            while not aside.exists():
                await anyio.sleep(0.02)
    assert not (workspace / "j/k/l/m/.git").exists()


async def test_a_repository_cloned_one_folder_down_is_kept_unless_it_can_run_code(
    workspace: Path,
) -> None:
    """`git clone` in the sandbox leaves a usable repository one folder down (where the next
    commands get its `.git` read-only); one whose `.git` could make the user's git run a
    program (a config key such as core.fsmonitor, a hook), or one deeper, is renamed
    aside as before."""
    from lsp_server.sandbox.platforms import find_backend

    if find_backend(None).problem is not None:
        missing_part("no usable bubblewrap here (`./run setup` installs it)")
    who = "-c user.email=t@example.com -c user.name=t"
    commands = {
        "clone": f"git init -q src && git -C src {who} commit -q --allow-empty -m one"
        " && git clone -q src copy",
        "fsmonitor": "git init -q evil && git -C evil config core.fsmonitor 'touch PWNED'",
        "hook": "git init -q hooky && printf '#!/bin/sh\\ntouch PWNED\\n' >"
        " hooky/.git/hooks/post-checkout && chmod +x hooky/.git/hooks/post-checkout",
        "deeper": "mkdir -p a && git init -q a/deep",
        # A plain .git made without git (the policy sees no repository made): not allowed.
        "computed": "mkdir plain && cd plain && "
        + _computed_repository("x").replace("\\tfsmonitor = x\\n", ""),
    }
    options = {"workspaceTrusted": True, "policy": {"mode": "bypass", "allow": ["Bash"]}}
    said = {}
    editor = FakeEditor()  # the user allows each: creating a repository always asks
    editor.script = editor.answer({"decision": "allow_once"})
    async with editor_session(workspace, editor, options) as client:
        for name, command in commands.items():
            result = await lsp_call(client, "bash", {"command": command})
            assert not result["isError"], text_of(result)
            said[name] = text_of(result)
        after = await lsp_call(
            client, "bash", {"command": f"git -C {workspace}/copy log --format=%s"}
        )
    for kept in ("src", "copy"):
        assert (workspace / kept / ".git").is_dir(), said["clone"]
    assert "renamed" not in said["clone"], said["clone"]
    assert "one" in text_of(after), text_of(after)
    assert "fsmonitor" not in (workspace / "plain/.git.blocked-by-toolhost/config").read_text()
    for aside in ("evil", "hooky", "a/deep", "plain"):
        assert not (workspace / aside / ".git").exists()
        assert (workspace / aside / ".git.blocked-by-toolhost").is_dir()
    assert "evil/.git was made by the command" in said["fsmonitor"], said["fsmonitor"]
    assert not (workspace / "PWNED").exists()
