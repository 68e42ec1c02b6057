"""An approval answer toolhost cannot read is a denial at once, not a wait: a raw LSP client
(pytest-lsp would not send these) answers `toolhost/approve` of a real `toolhost serve`
with each malformed shape while the approval timeout is an hour. A call that waited for the
timeout would not answer within the peer's bound at all, and its text would say "no answer
within 3600 seconds"."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import text_of
from tests.server.raw_wire import RawPeer

HOUR = {"policy": {"approvalTimeoutSeconds": 3600}}
APPROVALS = {"experimental": {"toolhost": {"approvals": True}}}

# (what the editor answers with, how the result quotes it back)
MALFORMED: list[tuple[dict[str, Any], str]] = [
    ({"result": {}}, "{}"),
    ({"result": {"decision": "maybe"}}, '{"decision": "maybe"}'),
    ({"result": "allow_once"}, '"allow_once"'),
    ({"result": 5}, "5"),
    ({"result": None}, "null"),
    ({}, "null"),  # neither result nor error
    ({"result": {"decision": "allow_once", "rule": 7}}, '{"decision": "allow_once", "rule": 7}'),
    ({"result": {"code": -32603, "message": "no"}}, '{"code": -32603, "message": "no"}'),
    ({"error": "declined"}, '"declined"'),  # an error that is no JSON-RPC error object
    ({"error": {}}, "{}"),
]


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[RawPeer]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".git").mkdir()
    peer = await RawPeer.start(root, tmp_path / "state", APPROVALS, HOUR)
    try:
        yield peer
    finally:
        await peer.close()


async def call_answered_with(peer: RawPeer, path: str, answer: dict[str, Any]) -> dict[str, Any]:
    """write_file `path`; the editor answers its approval request with `answer`."""
    peer.next_id += 1
    call_id = peer.next_id
    params = {"name": "write_file", "arguments": {"path": path, "content": "x\n"}}
    await peer.send({"jsonrpc": "2.0", "id": call_id, "method": "toolhost/call", "params": params})
    prompt = await peer.request_from_server("toolhost/approve")
    assert prompt["params"]["tool"] == "write_file"
    await peer.send({"jsonrpc": "2.0", "id": prompt["id"], **answer})
    reply = await peer.reply_to(call_id)
    result: dict[str, Any] = reply["result"]
    return result


async def test_each_malformed_answer_is_a_denial_at_once(editor: RawPeer) -> None:
    root = editor.root
    for number, (answer, quoted) in enumerate(MALFORMED):
        result = await call_answered_with(editor, f"f{number}.txt", answer)
        text = text_of(result)
        assert result["isError"] is True, (answer, text)
        assert result["error"]["code"] == "permission.unreadable_answer", (answer, text)
        assert f"the editor gave an answer toolhost cannot read (it sent {quoted})" in text, (
            answer,
            text,
        )
        assert "no answer within" not in text
        assert "tell the user" in result["error"]["recovery"]
        assert not (root / f"f{number}.txt").exists()
    # Each one is a warning for the editor's developer, in the editor's log.
    warnings = [m for m in editor.logged() if "cannot be read" in m]
    assert len(warnings) == len(MALFORMED), warnings
    assert any("toolhost/approve" in m and '"decision": "maybe"' in m for m in warnings)
    # The server goes on serving, and a readable answer still allows.
    allowed = await call_answered_with(editor, "fine.txt", {"result": {"decision": "allow_once"}})
    assert allowed["isError"] is False, text_of(allowed)
    assert (root / "fine.txt").read_text() == "x\n"


async def test_what_the_editor_sent_is_bounded_and_escaped(editor: RawPeer) -> None:
    odd = "\x1b[31m" + "é" * 5000 + "\u2028"
    result = await call_answered_with(editor, "odd.txt", {"result": {"decision": odd}})
    text = text_of(result)
    assert result["error"]["code"] == "permission.unreadable_answer"
    assert '(it sent {"decision": "\\u001b[31m\\u00e9\\u00e9' in text
    assert "\x1b" not in text and "é" not in text
    sent = text.split("(it sent ", 1)[1].split("), which counts", 1)[0]
    escaped = json.dumps({"decision": odd})  # ASCII, as json.dumps writes by default
    assert sent.endswith(f"... ({len(escaped)} chars in all)") and len(sent) < 260, sent
    assert not (editor.root / "odd.txt").exists()


async def test_a_json_rpc_error_answer_is_a_denial_with_its_message(editor: RawPeer) -> None:
    """A well-formed error is readable: the editor could not show the prompt."""
    error = {"code": -32603, "message": "the prompt could not open"}
    result = await call_answered_with(editor, "err.txt", {"error": error})
    text = text_of(result)
    assert result["error"]["code"] == "permission.user_denied"
    assert 'the editor could not show the approval (it said "the prompt could not open")' in text
    assert not (editor.root / "err.txt").exists()
