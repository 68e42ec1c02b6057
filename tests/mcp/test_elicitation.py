"""Approvals over MCP without an editor: the client's elicitation form decides."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from lsp_server.policy.client_approvals import UNSEEN_SECONDS
from tests.mcp.clients import mcp_session, structured, text_of

EDIT = {"path": "notes.md", "old_string": "line three", "new_string": "line 3"}
PERSON_READS = UNSEEN_SECONDS + 0.2


def answering(
    action: str, content: dict[str, Any] | None, asked: list[Any], *, reads: float = 0.0
) -> Any:
    """The client's form: answers `action` after `reads` seconds (a person reads the form;
    a decline faster than UNSEEN_SECONDS is a headless client's, permission.form_not_shown)."""

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        await asyncio.sleep(reads)
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
    # ... leading with the change: clients fold a long message after its first lines.
    lead = form.message.splitlines()[:3]
    assert lead == ["Edit notes.md: 1 line added, 1 removed", "-line three", "+line 3"], lead
    choices = form.requested_schema["properties"]["decision"]["oneOf"]
    assert [c["const"] for c in choices] == ["allow_once", "allow_session", "deny"]


@pytest.mark.slow
async def test_declined_form_leaves_the_file_and_says_so(ws: Path) -> None:
    asked: list[Any] = []
    callback = answering("decline", None, asked, reads=PERSON_READS)
    async with mcp_session(ws, elicitation_callback=callback) as session:
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


@pytest.mark.slow
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


@pytest.mark.slow
async def test_2026_revision_asks_with_input_required_and_resumes(ws: Path) -> None:
    """2026-07-28 has no server-to-client requests: the form comes back as input_required
    and the retry with the answer finishes the same call."""
    asked: list[Any] = []
    async with mcp_session(
        ws, modern=True, elicitation_callback=answering("accept", {}, asked)
    ) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        first = await session.call_tool("edit_file", EDIT, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        form = first.input_requests["approval"]
        assert "-line three" in form.params.message and "+line 3" in form.params.message
        assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"  # waiting, not written
        answer = types.ElicitResult(action="accept", content={"decision": "allow_once"})
        done = await session.call_tool(
            "edit_file",
            EDIT,
            input_responses={"approval": answer},
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(done, types.CallToolResult) and done.is_error is False, done
    assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"


@pytest.mark.slow
async def test_2026_revision_decline_leaves_the_file(ws: Path) -> None:
    async with mcp_session(
        ws, modern=True, elicitation_callback=answering("accept", {}, [])
    ) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        first = await session.call_tool("edit_file", EDIT, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        await asyncio.sleep(PERSON_READS)  # a person reads the form, then declines
        done = await session.call_tool(
            "edit_file",
            EDIT,
            input_responses={"approval": types.ElicitResult(action="decline")},
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(done, types.CallToolResult) and done.is_error is True
    assert "declined" in text_of(done)
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"


async def test_2026_revision_an_unreadable_answer_is_a_denial_at_once(ws: Path) -> None:
    """An answer that is no elicitation answer (a sampling result), or a decision that is
    none of the form's choices: denied with permission.unreadable_answer, nothing written."""
    sampled = types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="yes"), model="m"
    )
    off_form = types.ElicitResult(action="accept", content={"decision": "allow_forever"})
    async with mcp_session(
        ws, modern=True, elicitation_callback=answering("accept", {}, [])
    ) as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        for answer, quoted in [(sampled, '"model": "m"'), (off_form, '"allow_forever"')]:
            first = await session.call_tool("edit_file", EDIT, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult), first
            done = await session.call_tool(
                "edit_file",
                EDIT,
                input_responses={"approval": answer},
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(done, types.CallToolResult) and done.is_error is True, done
            assert structured(done)["code"] == "permission.unreadable_answer"
            assert "the MCP client gave an answer toolhost cannot read" in text_of(done)
            assert quoted in text_of(done)
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"
