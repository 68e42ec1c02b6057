"""Approvals a person can read, over the real protocol: what toolhost/approve carries for
bash, and toolhost/preview (a dry run up to the approval step) — `toolhost serve` as a
subprocess, a pytest-lsp client playing the editor (tests/fake_editor.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from lsp_server.core.diffs import unified_diff
from tests.conftest import require_program
from tests.fake_editor import APPROVALS, FakeEditor
from tests.helpers import lsp_call, lsp_session, text_of

OLD = "def total_value(items):"
NEW = "def total_value(items: list[Item]) -> float:"
CLIENT = types.ClientInfo(name="Test Chat", version="1.0")


def editor_session(workspace: Path, editor: FakeEditor, options: dict[str, Any] | None = None):
    return lsp_session(
        workspace,
        options,
        experimental=APPROVALS,
        client_factory=editor.factory,
        client_info=CLIENT,
    )


async def preview(client: Any, name: str, arguments: Any, **extra: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, **extra}
    result: dict[str, Any] = await client.protocol.send_request_async("toolhost/preview", params)
    return result


async def test_bash_approval_carries_folder_background_timeout_sandbox_and_client(
    workspace: Path,
) -> None:
    (workspace / "sub").mkdir()
    editor = FakeEditor()

    async def allow_only_cd(params: dict[str, Any]) -> dict[str, Any]:
        if params["arguments"]["command"] == "cd sub":
            return {"decision": "allow_once"}
        return {"decision": "deny", "reason": "just looking"}

    editor.script = allow_only_cd
    # No sandbox: every command asks (with one, contained commands run unasked).
    async with editor_session(workspace, editor, {"shell": {"sandbox": "off"}}) as client:
        await lsp_call(client, "bash", {"command": "cd sub"}, session="moved")
        await lsp_call(
            client, "bash", {"command": "make test", "timeout_ms": 5000}, session="moved"
        )
        await lsp_call(client, "bash", {"command": "npm run dev", "run_in_background": True})
        await lsp_call(client, "bash", {"command": "make lint"})
    cd, foreground, background, default = editor.prompts
    assert cd["cwd"] == str(workspace.resolve())
    assert foreground["cwd"] == str((workspace / "sub").resolve())
    assert foreground["background"] is False and foreground["timeoutMs"] == 5000
    assert background["background"] is True and background["timeoutMs"] is None
    assert default["timeoutMs"] == 120000
    assert {p["sandbox"] for p in editor.prompts} == {"none"}
    assert {p["client"] for p in editor.prompts} == {"Test Chat"}


async def test_a_read_outside_the_sandbox_is_not_called_low_risk(workspace: Path) -> None:
    """The prompt says "not sandboxed: the command can write anywhere you can" beside the
    risk: a command read as a plain read is low risk only where the sandbox holds it to
    that; outside it the read is a guess."""
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "deny", "reason": "just looking"})
    async with editor_session(workspace, editor, {"policy": {"ask": ["Bash"]}}) as client:
        await lsp_call(client, "bash", {"command": "ls src", "sandbox": "off"})
        shown = await preview(client, "bash", {"command": "cat README.md", "sandbox": "off"})
        held = await preview(client, "bash", {"command": "cat README.md"})
    [asked] = editor.prompts
    assert (asked["sandbox"], asked["risk"]) == ("none", "medium")
    assert (shown["sandbox"], shown["risk"]) == ("none", "medium")
    if held["sandbox"] == "read-only":  # bubblewrap works here
        assert held["risk"] == "low"


async def test_bash_approval_names_the_sandbox_the_command_would_run_in(
    workspace: Path,
) -> None:
    require_program("bwrap", "contained commands run under bubblewrap")
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "deny", "reason": "just looking"})
    async with editor_session(workspace, editor) as client:
        contained = await lsp_call(client, "bash", {"command": "touch contained.txt"})
        await lsp_call(client, "bash", {"command": "curl -s 127.0.0.1:9", "sandbox": "network"})
        await lsp_call(client, "bash", {"command": "touch outside.txt", "sandbox": "off"})
        shown = await preview(client, "bash", {"command": "make", "sandbox": "network"})
    assert not contained["isError"], text_of(contained)  # contained: no prompt
    assert [p["sandbox"] for p in editor.prompts] == ["workspace-write+network", "none"]
    assert shown["sandbox"] == "workspace-write+network"


async def test_writer_approval_names_the_client_and_has_no_shell_fields(workspace: Path) -> None:
    editor = FakeEditor()
    async with editor_session(workspace, editor) as client:
        await lsp_call(client, "read_file", {"path": "src/inventory.py"})
        await lsp_call(
            client, "edit_file", {"path": "src/inventory.py", "old_string": OLD, "new_string": NEW}
        )
    [prompt] = editor.prompts
    assert prompt["client"] == "Test Chat"
    assert (prompt["cwd"], prompt["background"], prompt["timeoutMs"], prompt["sandbox"]) == (
        None,
        None,
        None,
        None,
    )


async def test_preview_returns_the_diff_and_writes_nothing(workspace: Path) -> None:
    target = workspace / "src" / "inventory.py"
    before = target.read_text()
    editor = FakeEditor()
    edit = {"path": "src/inventory.py", "old_string": OLD, "new_string": NEW}
    async with editor_session(workspace, editor) as client:
        await lsp_call(client, "read_file", {"path": "src/inventory.py"})
        shown = await preview(client, "edit_file", edit)
        after_preview = target.read_text()
        calls_after_preview = len(client.did_calls)  # type: ignore[attr-defined]
        # The preview left the session's observation as it was: the real call works.
        result = await lsp_call(client, "edit_file", edit)
    assert shown["wouldAsk"] is True and shown.get("error") is None
    assert shown["diff"] == unified_diff(before, before.replace(OLD, NEW), "src/inventory.py")
    assert shown["title"] == "Edit src/inventory.py"
    # The summary says how big the change is in words: it is read where no diff is beside it
    # (a tooltip, a notification), so it never points at one.
    assert shown["summary"] == "Edit src/inventory.py: 1 line added, 1 removed."
    assert shown["paths"] == [str(target.resolve())]
    assert shown["risk"] == "medium"
    assert after_preview == before
    assert calls_after_preview == 1  # only the read: a preview is not a call
    assert not result["isError"], text_of(result)
    assert [p["diff"] for p in editor.prompts] == [shown["diff"]]


async def test_preview_of_bash_runs_nothing_and_gives_its_details(workspace: Path) -> None:
    editor = FakeEditor()
    async with editor_session(workspace, editor, {"shell": {"sandbox": "off"}}) as client:
        shown = await preview(
            client, "bash", {"command": "touch ran.txt", "run_in_background": True}
        )
    assert not (workspace / "ran.txt").exists()
    assert editor.prompts == []
    assert shown["wouldAsk"] is True
    assert shown["title"] == "Run: touch ran.txt"
    assert shown["cwd"] == str(workspace.resolve())
    assert shown["background"] is True and shown["timeoutMs"] is None
    assert shown["sandbox"] == "none"
    assert shown.get("diff") is None


async def test_preview_reports_what_the_call_would_refuse(workspace: Path) -> None:
    editor = FakeEditor()
    options = {"policy": {"deny": ["bash(rm:*)"], "allow": ["Edit(src/**)"]}}
    async with editor_session(workspace, editor, {**options, "workspaceTrusted": True}) as client:
        unobserved = await preview(
            client, "edit_file", {"path": "src/inventory.py", "old_string": OLD, "new_string": NEW}
        )
        outside = await preview(client, "read_file", {"path": "../../etc/passwd"})
        reader = await preview(client, "read_file", {"path": "README.md"})
        denied = await preview(client, "bash", {"command": "rm -rf build"})
        bad = await preview(client, "edit_file", {"path": 3})
        unknown = await preview(client, "edit_fiel", {})
        await lsp_call(client, "read_file", {"path": "src/inventory.py"})
        allowed = await preview(
            client, "edit_file", {"path": "src/inventory.py", "old_string": OLD, "new_string": NEW}
        )
    assert unobserved["error"]["code"] == "FS_NOT_OBSERVED"
    assert outside["error"]["code"] == "workspace.outside_scope"
    assert reader["wouldAsk"] is False and reader["summary"].endswith("it changes nothing.")
    assert denied["error"]["code"] == "permission.rule_denied" and denied["wouldAsk"] is False
    assert bad["error"]["code"] == "schema_mismatch" and bad["error"]["violations"]
    assert unknown["error"]["code"] == "unknown_tool"
    assert allowed["wouldAsk"] is False and allowed.get("error") is None
    assert "+def total_value(items: list[Item]) -> float:" in allowed["diff"]
    assert editor.prompts == []


async def test_client_side_settings_are_not_reported_as_unknown(workspace: Path) -> None:
    editor = FakeEditor()
    client_side = {"trace": {"server": "verbose"}, "server": {"path": "", "python": ""}}
    editor.settings = {**client_side, "policy": {"allow": ["Read"]}, "bogus": {"x": 1}}
    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(configuration=True)
    )
    async with lsp_session(
        workspace,
        client_side,
        experimental=APPROVALS,
        client_factory=editor.factory,
        capabilities=capabilities,
    ) as client:
        await lsp_call(client, "read_file", {"path": "src/inventory.py"})
        status = await client.protocol.send_request_async("toolhost/status", {})
    problems = "\n".join(status["configProblems"] + editor.messages)
    assert "'bogus'" in problems  # a real unknown section is still reported
    assert "'trace'" not in problems and "'server'" not in problems and "server." not in problems
