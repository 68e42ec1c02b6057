"""An editor that declines `workspace/applyEdit` — with `applied: false` (VS Code, Neovim)
or with a JSON-RPC error (eglot) — gives the agent `editor.refused` with the editor's
reason, and nothing changes: `toolhost serve` as a subprocess, a pytest-lsp editor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.fake_editor import EDITOR_CAPABILITIES, ApplyAnswer, FakeEditor
from tests.helpers import lsp_call, lsp_session


def declined_with_false(params: types.ApplyWorkspaceEditParams) -> Any:
    return types.ApplyWorkspaceEditResult(applied=False, failure_reason="the user said no")


def declined_with_an_error(params: types.ApplyWorkspaceEditParams) -> Any:
    # What eglot answers when its user declines "Server wants to edit ... Proceed?".
    raise JsonRpcException(code=-32603, message="User declined server-initiated edit")


@pytest.mark.parametrize(
    ("decline", "reason"),
    [
        (declined_with_false, "the user said no"),
        (declined_with_an_error, "User declined server-initiated edit"),
    ],
)
async def test_a_declined_edit_is_editor_refused_and_changes_nothing(
    tmp_path: Path, decline: ApplyAnswer, reason: str
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "notes.txt"
    path.write_text("alpha\nbeta\n", encoding="utf-8")
    editor = FakeEditor()
    editor.answer_apply_edit = decline
    async with lsp_session(
        root,
        {"policy": {"mode": "bypass"}},
        experimental={"saveDocument": True},
        client_factory=editor.factory,
        capabilities=EDITOR_CAPABILITIES,
    ) as client:
        editor.open(path)
        await lsp_call(client, "read_file", {"path": "notes.txt"})
        result = await lsp_call(
            client, "edit_file", {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
        )
        buffer = editor.text(path)
        # The server keeps serving, and the session can still read the file.
        again = await lsp_call(client, "read_file", {"path": "notes.txt"})
    assert len(editor.apply_edits) == 1
    assert result["isError"] is True
    assert result["error"]["code"] == "editor.refused"
    assert reason in result["error"]["message"]
    assert "nothing was changed" in result["error"]["message"]
    assert buffer == "alpha\nbeta\n"
    assert path.read_text(encoding="utf-8") == "alpha\nbeta\n"
    assert again["isError"] is False


def unreadable_editor(apply: bool, answer: Any) -> FakeEditor:
    """Applies the edit to its buffer (or not), then answers applyEdit with `answer`, which
    is no ApplyWorkspaceEditResult."""
    editor = FakeEditor()

    def answer_apply_edit(params: types.ApplyWorkspaceEditParams) -> Any:
        if apply:
            editor.apply_to_buffers(params)
        return answer

    editor.answer_apply_edit = answer_apply_edit
    return editor


@pytest.mark.slow
@pytest.mark.parametrize(("apply", "answer"), [(True, "ok"), (False, {})])
async def test_an_unreadable_apply_edit_answer_is_judged_by_the_buffer(
    tmp_path: Path, apply: bool, answer: Any
) -> None:
    """The answer cannot say whether the edit was made; the buffer can: the edited text is
    a success, an unchanged buffer (within edits.editor_timeout_seconds) editor.refused."""
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "notes.txt"
    path.write_text("alpha\nbeta\n", encoding="utf-8")
    editor = unreadable_editor(apply, answer)
    options = {"policy": {"mode": "bypass"}, "edits": {"editorTimeoutSeconds": 2}}
    async with lsp_session(
        root,
        options,
        client_factory=editor.factory,
        capabilities=EDITOR_CAPABILITIES,
    ) as client:
        editor.open(path)
        await lsp_call(client, "read_file", {"path": "notes.txt"})
        result = await lsp_call(
            client, "edit_file", {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
        )
        buffer = editor.text(path)
    assert len(editor.apply_edits) == 1
    if apply:
        assert result["isError"] is False, result
        assert buffer == "alpha\nBETA\n"
        return
    assert result["error"]["code"] == "editor.refused"
    assert "an answer toolhost cannot read (it sent {})" in result["error"]["message"]
    assert buffer == "alpha\nbeta\n"
    assert path.read_text(encoding="utf-8") == "alpha\nbeta\n"
