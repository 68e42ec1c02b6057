"""A workspace .toolhost.toml applies only once the user approved its exact content, over
the editor's LSP connection: toolhost/configUntrusted after initialize, toolhost/trustConfig
from the editor, and toolhost/status saying which layer set what."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.fake_editor import FakeEditor
from tests.helpers import lsp_call, text_of
from tests.policy.test_policy_e2e import edit_inventory, editor_session

ALLOW_SRC = '[policy]\nallow = ["Edit(src/**)"]\n'


@pytest.mark.slow
async def test_the_editor_approves_the_content_it_showed(workspace: Path) -> None:
    config = workspace / ".toolhost.toml"
    config.write_text(ALLOW_SRC)
    sha = hashlib.sha256(config.read_bytes()).hexdigest()
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "deny"})
    async with editor_session(workspace, editor, {"workspaceTrusted": True}) as client:
        await asyncio.wait_for(editor.config_noticed.wait(), timeout=60)
        (notice,) = editor.untrusted_configs
        assert notice["path"] == str(config) and notice["sha256"] == sha
        assert notice["reason"] == "new file, not yet approved"
        assert notice["ignored"] == ["allow rule 'Edit(src/**)'"]
        before = await edit_inventory(client)
        send = client.protocol.send_request_async
        stale = await send("toolhost/trustConfig", {"path": str(config), "sha256": "0" * 64})
        elsewhere = await send(
            "toolhost/trustConfig",
            {"path": str(workspace / "src" / ".toolhost.toml"), "sha256": sha},
        )
        trusted = await send("toolhost/trustConfig", {"path": str(config), "sha256": sha})
        after = await edit_inventory(client)
        status = await send("toolhost/status", {})
    assert before["isError"] and before["meta"]["approval"]["decision"] == "deny"
    assert stale["trusted"] is False and "changed since it was shown" in stale["message"]
    assert elsewhere["trusted"] is False and "not a workspace root's" in elsewhere["message"]
    assert trusted["trusted"] is True and "its settings apply now" in trusted["message"]
    assert after["meta"]["approval"] == {"decision": "allow", "rule": "Edit(src/**)"}
    assert len(editor.prompts) == 1
    (listed,) = status["workspaceConfig"]
    assert listed == {
        "path": str(config),
        "sha256": sha,
        "state": "trusted",
        "reason": "approved by you (this exact content)",
        "ignored": [],
    }
    assert status["policySources"]["policy.allow"] == f"workspace file {config}"
    assert status["policySources"]["policy.mode"] == "default"


@pytest.mark.slow
async def test_a_changed_file_is_untrusted_in_the_next_session(workspace: Path) -> None:
    config = workspace / ".toolhost.toml"
    config.write_text(ALLOW_SRC)
    editor = FakeEditor()
    async with editor_session(workspace, editor) as client:
        await asyncio.wait_for(editor.config_noticed.wait(), timeout=60)
        sha = editor.untrusted_configs[0]["sha256"]
        answer = await client.protocol.send_request_async(
            "toolhost/trustConfig", {"path": str(config), "sha256": sha}
        )
        assert answer["trusted"]
    # The agent appends a line: the whole file is untrusted again, in a new session too.
    config.write_text(ALLOW_SRC + 'mode = "bypass"\n')
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "deny"})
    async with editor_session(workspace, editor) as client:
        await asyncio.wait_for(editor.config_noticed.wait(), timeout=60)
        result = await lsp_call(client, "write_file", {"path": "agent.txt", "content": "x"})
        status = await client.protocol.send_request_async("toolhost/status", {})
    (notice,) = editor.untrusted_configs
    assert notice["reason"] == "changed since you approved it"
    assert "policy.mode = 'bypass'" in notice["ignored"]
    assert status["workspaceConfig"][0]["state"] == "untrusted"
    assert status["policySources"]["policy.mode"] == "default"
    # Not bypass: the write asked, and the user's deny stands.
    assert result["isError"] and result["meta"]["approval"]["decision"] == "deny"
    assert [p["tool"] for p in editor.prompts] == ["write_file"]
    assert not (workspace / "agent.txt").exists()


async def test_a_change_seen_by_the_editor_makes_the_running_server_tighten(
    workspace: Path,
) -> None:
    config = workspace / ".toolhost.toml"
    config.write_text(ALLOW_SRC)
    sha = hashlib.sha256(config.read_bytes()).hexdigest()
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "deny"})
    async with editor_session(workspace, editor) as client:
        await asyncio.wait_for(editor.config_noticed.wait(), timeout=60)
        send = client.protocol.send_request_async
        assert (await send("toolhost/trustConfig", {"path": str(config), "sha256": sha}))["trusted"]
        allowed = await edit_inventory(client)
        # The agent rewrites the approved file; the editor's watcher reports it.
        config.write_text(ALLOW_SRC + 'mode = "bypass"\n')
        editor.config_noticed.clear()
        changed = types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Changed)
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[changed])
        )
        await asyncio.wait_for(editor.config_noticed.wait(), timeout=60)
        refused = await lsp_call(client, "write_file", {"path": "agent.txt", "content": "x"})
    assert allowed["meta"]["approval"] == {"decision": "allow", "rule": "Edit(src/**)"}
    assert editor.untrusted_configs[-1]["reason"] == "changed since you approved it"
    assert refused["isError"] and refused["meta"]["approval"]["decision"] == "deny"
    assert not (workspace / "agent.txt").exists()


async def test_settings_the_running_server_cannot_change_say_restart(workspace: Path) -> None:
    config = workspace / ".toolhost.toml"
    config.write_text('[shell]\nsandbox_network = true\n[policy]\nmode = "acceptEdits"\n')
    sha = hashlib.sha256(config.read_bytes()).hexdigest()
    async with editor_session(workspace, FakeEditor()) as client:
        answer = await client.protocol.send_request_async(
            "toolhost/trustConfig", {"path": str(config), "sha256": sha}
        )
    assert answer["trusted"] is True
    assert "its policy applies now, its shell settings after a restart" in answer["message"]


async def test_the_managed_file_over_the_editors_settings(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    managed = tmp_path / "managed.toml"
    managed.write_text('[policy]\nmode = "default"\ndeny = ["Edit(src/**)"]\n')
    monkeypatch.setenv("TOOLHOST_MANAGED_CONFIG", str(managed))
    editor = FakeEditor()
    async with editor_session(workspace, editor, {"policy": {"mode": "bypass"}}) as client:
        denied = await edit_inventory(client)
        status = await client.protocol.send_request_async("toolhost/status", {})
    assert denied["error"]["code"] == "permission.rule_denied", denied
    assert status["managedConfig"] == {
        "path": str(managed),
        "state": "applied",
        "message": "",
        "locked": ["policy.mode"],
    }
    assert status["policySources"]["policy.mode"] == f"managed file {managed}"
    assert any("policy.mode = 'bypass' ignored" in p for p in status["configProblems"])


async def test_an_invalid_managed_file_fails_closed_in_the_editor(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    managed = tmp_path / "managed.toml"
    managed.write_text("[policy]\nmode = ")
    monkeypatch.setenv("TOOLHOST_MANAGED_CONFIG", str(managed))
    editor = FakeEditor()
    async with editor_session(workspace, editor, {"policy": {"mode": "bypass"}}) as client:
        first = await lsp_call(client, "read_file", {"path": "src/inventory.py"})
        edited = await edit_inventory(client)
        status = await client.protocol.send_request_async("toolhost/status", {})
    assert text_of(first).startswith(f"toolhost: {managed}: is not valid TOML")
    assert "fails closed" in text_of(first)
    assert edited["isError"] and "readOnly" in text_of(edited)
    assert status["managedConfig"]["state"] == "invalid"
    assert any("fails closed" in p for p in status["configProblems"])


async def test_odd_trust_requests_are_refused_not_crashed(workspace: Path) -> None:
    config = workspace / ".toolhost.toml"
    config.write_text(ALLOW_SRC)
    async with editor_session(workspace, FakeEditor()) as client:
        send = client.protocol.send_request_async
        answers = [
            await send("toolhost/trustConfig", {"path": "a\x00b", "sha256": "0" * 64}),
            await send("toolhost/trustConfig", {"path": "x" * 100_000, "sha256": "0" * 64}),
            await send("toolhost/trustConfig", {"path": ".toolhost.toml", "sha256": "xyz"}),
        ]
        errors = []
        surrogate = {"path": "x", "sha256": "\ud800"}
        odd: list[Any] = [{}, {"path": 5, "sha256": None}, [1, 2], surrogate]
        for params in odd:
            try:
                await send("toolhost/trustConfig", params)
            except Exception as exc:  # the JSON-RPC error the server answered
                errors.append(str(exc))
        status = await send("toolhost/status", {})
    assert [a["trusted"] for a in answers] == [False, False, False]
    assert len(errors) == 4 and not any("internal" in e.lower() for e in errors), errors
    assert status["workspaceConfig"][0]["state"] == "untrusted"


async def test_a_rewritten_approved_file_turns_the_sandbox_back_on_at_once(
    workspace: Path,
) -> None:
    from lsp_server.config.trust import TrustStore

    config = workspace / ".toolhost.toml"
    config.write_text('[shell]\nsandbox = "off"\n')
    state = workspace.parent / f".{workspace.name}-state"  # lsp_session's state folder
    TrustStore(state).approve_config(
        workspace, config, hashlib.sha256(config.read_bytes()).hexdigest()
    )
    editor = FakeEditor()
    command = {"name": "bash", "arguments": {"command": "touch made.txt"}}
    async with editor_session(workspace, editor) as client:
        send = client.protocol.send_request_async
        before = await send("toolhost/preview", command)
        config.write_text('[shell]\nsandbox = "off"\n# and more from the agent\n')
        changed = types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Changed)
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[changed])
        )
        await asyncio.wait_for(editor.config_noticed.wait(), timeout=60)
        after = await send("toolhost/preview", command)
    assert before["sandbox"] == "none" and before["wouldAsk"] is True
    assert after["sandbox"] == "workspace-write" and after["wouldAsk"] is False
