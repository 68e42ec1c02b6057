"""`toolhost mcp --approvals client` (or `[mcp] approvals = "client"`): the MCP client's own
permission step is the approval; what no client may wave through still needs a person. And a
form answered faster than anyone could read it is reported as not shown, with both ways
forward. The real agents' side of this is tests/agents/."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.clients import mcp_session, structured, text_of
from tests.mcp.test_elicitation import EDIT, answering


def user_config(text: str) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "toolhost"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text, encoding="utf-8")


def audit() -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for path in Path(os.environ["TOOLHOST_STATE_DIR"]).rglob("audit.jsonl"):
        lines += [json.loads(line) for line in path.read_text().splitlines() if line]
    return lines


async def test_a_form_declined_at_once_was_not_shown(ws: Path) -> None:
    """`codex exec` declines every form within a millisecond: not "the user denied"."""
    asked: list[Any] = []
    callback = answering("decline", None, asked)
    async with mcp_session(ws, name="codex-mcp-client", elicitation_callback=callback) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        result = await session.call_tool("edit_file", EDIT)
    assert len(asked) == 1 and result.is_error is True
    error = structured(result)
    assert error["code"] == "permission.form_not_shown", error
    assert "codex-mcp-client answered" in error["message"] and "without showing" in error["message"]
    assert "user denied" not in error["message"]
    assert "toolhost mcp --approvals client" in error["message"]
    assert "allow rule such as edit_file(/notes.md)" in error["message"]
    assert error["recovery"].startswith("do not retry the same call")
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"


async def test_client_approvals_allow_the_call_and_audit_the_client(ws: Path) -> None:
    async with mcp_session(ws, "--approvals", "client", name="some-agent") as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        result = await session.call_tool("edit_file", EDIT)
    assert result.is_error is False, text_of(result)
    assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"
    approval = result.meta["toolhost"]["approval"]  # type: ignore[index]
    assert approval == {"decision": "client_approved", "rule": None, "approvedBy": "some-agent"}
    edits = [line for line in audit() if line["tool"] == "edit_file"]
    assert [(e["decision"], e.get("approvedBy")) for e in edits] == [
        ("client_approved", "some-agent")
    ]


async def test_the_config_setting_does_the_same(ws: Path) -> None:
    user_config('[mcp]\napprovals = "client"\n')
    async with mcp_session(ws) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        result = await session.call_tool("edit_file", EDIT)
    assert result.is_error is False, text_of(result)
    assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"


async def test_an_untrusted_workspace_cannot_turn_it_on(ws: Path) -> None:
    """A repository's .toolhost.toml cannot hand approvals to the agent."""
    (ws / ".toolhost.toml").write_text('[mcp]\napprovals = "client"\n', encoding="utf-8")
    async with mcp_session(ws) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        result = await session.call_tool("edit_file", EDIT)
    assert structured(result)["code"] == "permission.unattended", text_of(result)
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"


async def test_the_default_is_unchanged(ws: Path) -> None:
    """Without the flag or setting a client without forms gets policy's own decision."""
    async with mcp_session(ws) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        result = await session.call_tool("edit_file", EDIT)
    assert structured(result)["code"] == "permission.unattended"
    assert "--approvals client" in structured(result)["message"]


@pytest.mark.slow
async def test_deny_rules_and_read_only_mode_still_hold(ws: Path) -> None:
    user_config('[policy]\ndeny = ["Edit(notes.md)"]\n')
    async with mcp_session(ws, "--approvals", "client") as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        denied = await session.call_tool("edit_file", EDIT)
    assert structured(denied)["code"] == "permission.rule_denied"
    user_config('[policy]\nmode = "readOnly"\n')
    async with mcp_session(ws, "--approvals", "client") as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        read_only = await session.call_tool("edit_file", EDIT)
    assert structured(read_only)["code"] == "permission.rule_denied"
    assert "readOnly" in structured(read_only)["message"]
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"


@pytest.mark.slow
async def test_policy_files_and_leaving_the_sandbox_still_need_a_person(ws: Path) -> None:
    """A client's allow list cannot let an agent rewrite toolhost's policy or run outside
    the sandbox: without a form to show, those are refused; with one, a person is asked."""
    policy_file = {"path": ".toolhost.toml", "content": '[policy]\nmode = "bypass"\n'}
    outside = {"command": "touch made.txt", "sandbox": "off"}
    async with mcp_session(ws, "--approvals", "client") as session:
        policy = await session.call_tool("write_file", policy_file)
        unsandboxed = await session.call_tool("bash", outside)
    assert structured(policy)["code"] == "permission.unattended", text_of(policy)
    assert structured(unsandboxed)["code"] == "permission.unattended", text_of(unsandboxed)
    assert not (ws / ".toolhost.toml").exists() and not (ws / "made.txt").exists()
    asked: list[Any] = []
    person = answering("accept", {"decision": "deny", "reason": "no"}, asked)
    async with mcp_session(ws, "--approvals", "client", elicitation_callback=person) as session:
        policy = await session.call_tool("write_file", policy_file)
    assert len(asked) == 1 and ".toolhost.toml" in asked[0].message
    assert structured(policy)["code"] == "permission.user_denied"
    assert not (ws / ".toolhost.toml").exists()
