"""Approvals end to end: a real `toolhost serve` subprocess and a pytest-lsp client playing
the editor (tests/fake_editor.py answers toolhost/approve like a user would)."""

from __future__ import annotations

import asyncio
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from lsp_server.core.diffs import unified_diff
from tests.fake_editor import APPROVALS, FakeEditor
from tests.helpers import lsp_call, lsp_session, text_of

OLD = "def total_value(items):"
NEW = "def total_value(items: list[Item]) -> float:"


def editor_session(
    workspace: Path, editor: FakeEditor, options: dict[str, Any] | None = None, **kw: Any
):
    return lsp_session(
        workspace,
        options,
        experimental=kw.pop("experimental", APPROVALS),
        client_factory=editor.factory,
        **kw,
    )


async def edit_inventory(client: Any, session: str = "default") -> dict[str, Any]:
    await lsp_call(client, "read_file", {"path": "src/inventory.py"}, session=session)
    return await lsp_call(
        client,
        "edit_file",
        {"path": "src/inventory.py", "old_string": OLD, "new_string": NEW},
        session=session,
    )


async def test_approval_carries_the_diff_the_file_then_gets(workspace: Path) -> None:
    target = workspace / "src" / "inventory.py"
    before = target.read_text()
    editor = FakeEditor()
    async with editor_session(workspace, editor) as client:
        result = await edit_inventory(client)
    assert not result["isError"], text_of(result)
    after = target.read_text()
    assert after == before.replace(OLD, NEW)
    [prompt] = editor.prompts
    assert prompt["diff"] == unified_diff(before, after, "src/inventory.py")
    assert prompt["tool"] == "edit_file" and prompt["readOnly"] is False
    assert prompt["paths"] == [str(target.resolve())]
    assert prompt["title"] == "Edit src/inventory.py"
    assert prompt["risk"] == "medium"
    assert prompt["suggestedRules"][:2] == ["edit_file(src/inventory.py)", "Edit(src/inventory.py)"]
    assert prompt["arguments"]["new_string"] == NEW
    assert result["meta"]["approval"] == {"decision": "allow_once", "rule": None}


async def test_denied_call_changes_nothing_and_returns_the_reason(workspace: Path) -> None:
    target = workspace / "src" / "inventory.py"
    before = target.read_bytes()
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "deny", "reason": "keep the old signature"})
    async with editor_session(workspace, editor) as client:
        result = await edit_inventory(client)
    assert result["isError"]
    assert result["error"]["code"] == "permission.user_denied"
    assert "keep the old signature" in text_of(result)
    assert target.read_bytes() == before


async def test_allow_session_stops_prompts_in_that_session_only(workspace: Path) -> None:
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "allow_session", "rule": "Edit(src/**)"})
    async with editor_session(workspace, editor) as client:
        first = await lsp_call(client, "write_file", {"path": "src/a.py", "content": "a = 1\n"})
        second = await lsp_call(client, "write_file", {"path": "src/b/c.py", "content": "c = 1\n"})
        assert len(editor.prompts) == 1
        assert second["meta"]["approval"] == {"decision": "allow", "rule": "Edit(src/**)"}
        elsewhere = await lsp_call(client, "write_file", {"path": "docs/x.md", "content": "x\n"})
        other_session = await lsp_call(
            client, "write_file", {"path": "src/d.py", "content": "d = 1\n"}, session="other"
        )
    assert len(editor.prompts) == 3
    for result in (first, second, elsewhere, other_session):
        assert not result["isError"], text_of(result)
    assert first["meta"]["approval"] == {"decision": "allow_session", "rule": "Edit(src/**)"}


@pytest.mark.slow
async def test_allow_always_writes_the_rule_and_a_restarted_server_honours_it(
    workspace: Path, tmp_path: Path
) -> None:
    config = workspace / ".toolhost.toml"
    config.write_text("# our team's policy: keep this comment\n[policy]\ndeny = []  # none yet\n")
    state = tmp_path / "state"
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "allow_always", "rule": "write_file(src/gen/**)"})
    async with editor_session(workspace, editor, state_dir=state) as client:
        first = await lsp_call(client, "write_file", {"path": "src/gen/a.py", "content": "a\n"})
    assert first["meta"]["approval"]["decision"] == "allow_always"
    text = config.read_text()
    assert "# our team's policy: keep this comment" in text and "# none yet" in text
    assert tomllib.loads(text)["policy"]["allow"] == ["write_file(src/gen/**)"]

    restarted = FakeEditor()
    async with editor_session(workspace, restarted, state_dir=state) as client:
        again = await lsp_call(client, "write_file", {"path": "src/gen/b.py", "content": "b\n"})
    assert not again["isError"], text_of(again)
    assert again["meta"]["approval"] == {"decision": "allow", "rule": "write_file(src/gen/**)"}
    assert restarted.prompts == []

    # The same line added by the repository itself (no record in this user's state) does not
    # count in an untrusted workspace: the server asks.
    fresh_state = FakeEditor()
    async with editor_session(workspace, fresh_state, state_dir=tmp_path / "other") as client:
        await lsp_call(client, "write_file", {"path": "src/gen/c.py", "content": "c\n"})
    assert len(fresh_state.prompts) == 1


async def test_deny_rules_beat_bypass_and_allow(workspace: Path) -> None:
    target = workspace / "src" / "inventory.py"
    before = target.read_bytes()
    editor = FakeEditor()
    options = {"policy": {"mode": "bypass", "allow": ["Edit"], "deny": ["Edit(src/**)"]}}
    async with editor_session(workspace, editor, options) as client:
        result = await edit_inventory(client)
        outside_rule = await lsp_call(client, "write_file", {"path": "notes.md", "content": "n\n"})
    assert result["error"]["code"] == "permission.rule_denied"
    assert "Edit(src/**)" in text_of(result)
    assert target.read_bytes() == before
    assert not outside_rule["isError"]
    assert editor.prompts == []


@pytest.mark.slow
async def test_read_only_mode_refuses_every_writer(workspace: Path) -> None:
    editor = FakeEditor()
    options = {"policy": {"mode": "readOnly", "allow": ["Edit", "write_file"]}}
    async with editor_session(workspace, editor, options) as client:
        read = await lsp_call(client, "read_file", {"path": "src/inventory.py"})
        await lsp_call(client, "read_file", {"path": "README.md"})
        results = [
            await lsp_call(
                client,
                "edit_file",
                {"path": "src/inventory.py", "old_string": OLD, "new_string": NEW},
            ),
            await lsp_call(client, "write_file", {"path": "new.txt", "content": "x"}),
            await lsp_call(
                client,
                "move_file",
                {"source_path": "README.md", "destination_path": "README2.md"},
            ),
        ]
    assert not read["isError"]
    for result in results:
        assert result["error"]["code"] == "permission.rule_denied", text_of(result)
    assert not (workspace / "new.txt").exists() and (workspace / "README.md").exists()
    assert editor.prompts == []


async def test_symlink_cannot_satisfy_a_path_rule(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("secret = 1\n")
    (workspace / "src" / "escape.py").symlink_to(outside)
    (workspace / "docs").mkdir()
    (workspace / "docs" / "real.py").write_text("x = 1\n")
    (workspace / "src" / "inside_link.py").symlink_to(workspace / "docs" / "real.py")
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "deny", "reason": "not via a link"})
    async with editor_session(workspace, editor, {"policy": {"allow": ["Edit(src/**)"]}}) as client:
        escape = await lsp_call(
            client, "write_file", {"path": "src/escape.py", "content": "pwned\n"}
        )
        await lsp_call(client, "read_file", {"path": "src/inside_link.py"})
        inside = await lsp_call(
            client, "write_file", {"path": "src/inside_link.py", "content": "y\n"}
        )
    assert escape["error"]["code"] == "workspace.outside_scope"
    assert outside.read_text() == "secret = 1\n"
    # The link resolves to docs/real.py, which Edit(src/**) does not cover: the user is asked.
    assert inside["error"]["code"] == "permission.user_denied"
    assert [p["paths"] for p in editor.prompts] == [
        [str((workspace / "docs" / "real.py").resolve())]
    ]
    assert (workspace / "docs" / "real.py").read_text() == "x = 1\n"


@pytest.mark.slow
async def test_no_answer_within_the_timeout_is_deny(workspace: Path) -> None:
    editor = FakeEditor()
    release = asyncio.Event()

    async def never(params: dict[str, Any]) -> dict[str, Any]:
        await release.wait()
        return {"decision": "allow_once"}

    editor.script = never
    options = {"policy": {"approvalTimeoutSeconds": 0.5}}
    async with editor_session(workspace, editor, options) as client:
        result = await lsp_call(client, "write_file", {"path": "late.txt", "content": "x"})
        release.set()
    assert result["error"]["code"] == "permission.user_denied"
    assert "no answer within 0.5 seconds" in text_of(result)
    assert not (workspace / "late.txt").exists()


async def test_client_without_approvals_gets_the_unattended_decision(workspace: Path) -> None:
    editor = FakeEditor()
    async with editor_session(workspace, editor, experimental={}) as client:
        result = await lsp_call(client, "write_file", {"path": "x.txt", "content": "x"})
    assert result["error"]["code"] == "permission.unattended"
    assert editor.prompts == []
    assert not (workspace / "x.txt").exists()


async def test_ten_prompts_at_once_and_reads_do_not_wait(workspace: Path) -> None:
    editor = FakeEditor()
    release = asyncio.Event()

    async def hold(params: dict[str, Any]) -> dict[str, Any]:
        await release.wait()
        return {"decision": "allow_once"}

    editor.script = hold
    async with editor_session(workspace, editor) as client:
        writes = [
            asyncio.ensure_future(
                lsp_call(client, "write_file", {"path": f"gen/f{i}.txt", "content": f"{i}\n"})
            )
            for i in range(10)
        ]
        await editor.wait_for_prompts(10)
        # Ten prompts are open; read-only calls complete meanwhile.
        reads = await asyncio.gather(
            *(lsp_call(client, "read_file", {"path": "README.md"}) for _ in range(3))
        )
        assert not any(w.done() for w in writes)
        release.set()
        written = await asyncio.gather(*writes)
    assert all(not r["isError"] for r in reads)
    assert sorted(p["arguments"]["path"] for p in editor.prompts) == sorted(
        f"gen/f{i}.txt" for i in range(10)
    )
    assert all(not w["isError"] for w in written)
    assert sorted(os.listdir(workspace / "gen")) == sorted(f"f{i}.txt" for i in range(10))


@pytest.mark.slow
async def test_audit_log_has_one_line_per_call_matching_did_call(
    workspace: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    editor = FakeEditor()
    answers = iter([{"decision": "allow_once"}, {"decision": "deny", "reason": "no"}])

    async def respond(params: dict[str, Any]) -> dict[str, Any]:
        return next(answers)

    editor.script = respond
    async with editor_session(workspace, editor, state_dir=state) as client:
        results = [
            await lsp_call(client, "read_file", {"path": "src/inventory.py"}),
            await lsp_call(client, "write_file", {"path": "new.py", "content": "n = 1\n"}),
            await lsp_call(client, "write_file", {"path": "denied.py", "content": "d\n"}),
        ]
        # A call's didCall follows its answer: one more round trip has them all here.
        await client.protocol.send_request_async("toolhost/status", {})
        did_calls = list(client.did_calls)  # type: ignore[attr-defined]
    lines = [json.loads(line) for line in (state / "audit.jsonl").read_text().splitlines()]
    assert [line["callId"] for line in lines] == [r["callId"] for r in results]
    assert [d["callId"] for d in did_calls] == [r["callId"] for r in results]
    real = str((workspace / "src" / "inventory.py").resolve())
    assert lines[0]["paths"] == [real] and lines[0]["decision"] == "allow"
    assert lines[1]["paths"] == [str((workspace / "new.py").resolve())]
    assert (lines[1]["decision"], lines[1]["outcome"]) == ("allow_once", "ok")
    assert (lines[2]["decision"], lines[2]["outcome"]) == ("deny", "permission.user_denied")
    for line, note in zip(lines, did_calls, strict=True):
        assert line["paths"] == note["paths"]
        assert line["decision"] == note["decision"]
        assert line["rule"] == note["rule"]
        assert line["outcome"] == (note.get("code") or "ok")
        assert len(line["argumentsDigest"]) == 16 and line["session"] == note["session"]


async def test_client_settings_apply_and_untrusted_workspace_entries_are_reported(
    workspace: Path,
) -> None:
    (workspace / ".toolhost.toml").write_text('[policy]\nmode = "bypass"\nallow = ["Edit"]\n')
    editor = FakeEditor()
    editor.settings = {"policy": {"allow": ["write_file(cfg/**)"]}}
    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(configuration=True)
    )
    async with editor_session(workspace, editor, capabilities=capabilities) as client:
        by_settings = await lsp_call(client, "write_file", {"path": "cfg/a.txt", "content": "a"})
        asked = await lsp_call(client, "write_file", {"path": "other.txt", "content": "o"})
        status = await client.protocol.send_request_async("toolhost/status", {})
    # Still there when the user asks later why the setting did nothing (status, doctor).
    assert any("ignored: policy.mode = 'bypass'" in p for p in status["configProblems"])
    (listed,) = status["workspaceConfig"]
    assert listed["state"] == "untrusted" and listed["reason"] == "new file, not yet approved"
    assert listed["ignored"] == ["policy.mode = 'bypass'", "allow rule 'Edit'"]
    assert by_settings["meta"]["approval"] == {"decision": "allow", "rule": "write_file(cfg/**)"}
    assert asked["meta"]["approval"]["decision"] == "allow_once"
    assert [p["arguments"]["path"] for p in editor.prompts] == ["other.txt"]
    shown = "\n".join(editor.messages)
    assert "ignored: policy.mode = 'bypass', allow rule 'Edit'" in shown


async def test_a_trusted_workspace_alone_does_not_apply_its_config_file(workspace: Path) -> None:
    """Workspace trust means "project code may run": the agent can write .toolhost.toml
    there, so its allow rule waits for the user's approval of that content
    (tests/policy/test_config_trust_e2e.py approves it)."""
    (workspace / ".toolhost.toml").write_text('[policy]\nallow = ["Edit(src/**)"]\n')
    editor = FakeEditor()
    async with editor_session(workspace, editor, {"workspaceTrusted": True}) as client:
        result = await edit_inventory(client)
    assert result["meta"]["approval"]["decision"] == "allow_once"
    assert len(editor.prompts) == 1


@pytest.mark.slow
async def test_bash_rules_over_the_wire(workspace: Path) -> None:
    (workspace / "x").mkdir()
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "deny", "reason": "not that"})
    # Rules alone, without the sandbox that would let `rm -rf x` in the workspace run.
    options = {
        "policy": {"allow": ["bash(git status)", "bash(npm run test:*)"]},
        "shell": {"sandbox": "off"},
    }
    async with editor_session(workspace, editor, options) as client:
        plain = await lsp_call(client, "bash", {"command": "git status"})
        chained = await lsp_call(client, "bash", {"command": "git status && rm -rf x"})
        unit = await lsp_call(client, "bash", {"command": "npm run test:unit"})
        other = await lsp_call(client, "bash", {"command": "npm run testx"})
    assert plain["meta"]["approval"] == {"decision": "allow", "rule": "bash(git status)"}
    assert unit["meta"]["approval"] == {"decision": "allow", "rule": "bash(npm run test:*)"}
    assert chained["error"]["code"] == "permission.user_denied"
    assert other["error"]["code"] == "permission.user_denied"
    assert (workspace / "x").is_dir()
    assert [p["arguments"]["command"] for p in editor.prompts] == [
        "git status && rm -rf x",
        "npm run testx",
    ]
    assert editor.prompts[0]["risk"] == "high"
    assert editor.prompts[0]["title"] == "Run: git status && rm -rf x"
