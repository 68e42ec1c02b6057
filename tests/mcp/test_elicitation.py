"""Approvals over MCP without an editor: the client's elicitation form decides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types

from tests.mcp.clients import mcp_session, structured, text_of

EDIT = {"path": "notes.md", "old_string": "line three", "new_string": "line 3"}


def answering(action: str, content: dict[str, Any] | None, asked: list[Any]) -> Any:
    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return callback


async def test_accepted_form_applies_the_edit(ws: Path) -> None:
    asked: list[Any] = []
    callback = answering("accept", {"decision": "allow_once"}, asked)
    async with mcp_session(ws, elicitation_callback=callback) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        result = await session.call_tool("edit_file", EDIT)
    assert result.is_error is False, text_of(result)
    assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"
    form = asked[0]
    # The form shows what the user approves: the title, the path, the risk and the diff.
    assert "Edit notes.md" in form.message and "Risk:" in form.message
    assert "-line three" in form.message and "+line 3" in form.message
    choices = form.requested_schema["properties"]["decision"]["oneOf"]
    assert [c["const"] for c in choices] == ["allow_once", "allow_session", "deny"]


async def test_declined_form_leaves_the_file_and_says_so(ws: Path) -> None:
    asked: list[Any] = []
    async with mcp_session(ws, elicitation_callback=answering("decline", None, asked)) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        result = await session.call_tool("edit_file", EDIT)
    assert result.is_error is True
    assert structured(result)["code"] == "permission.user_denied"
    assert "declined" in text_of(result)
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"


async def test_deny_with_reason_reaches_the_agent(ws: Path) -> None:
    asked: list[Any] = []
    callback = answering("accept", {"decision": "deny", "reason": "not this file"}, asked)
    async with mcp_session(ws, elicitation_callback=callback) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        result = await session.call_tool("edit_file", EDIT)
    assert result.is_error is True and "not this file" in text_of(result)
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"


async def test_allow_for_session_is_not_asked_again(ws: Path) -> None:
    asked: list[Any] = []
    callback = answering("accept", {"decision": "allow_session"}, asked)
    async with mcp_session(ws, elicitation_callback=callback) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        first = await session.call_tool("edit_file", EDIT)
        second = await session.call_tool(
            "edit_file", {"path": "notes.md", "old_string": "line 3", "new_string": "line three"}
        )
    assert first.is_error is False and second.is_error is False, text_of(second)
    assert len(asked) == 1
