"""Revert this call in real Neovim: through the buffer, in one undo step, losing nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.nvim.conftest import Neovim

pytestmark = pytest.mark.real_client

NOTES_ON_DISK = "# Notes\n\nline three\nline four\nline five\n"


@pytest.fixture
def out(neovim: Neovim) -> dict[str, Any]:
    return neovim.run("checkpoints").out


def test_revert_of_an_edit_in_a_dirty_buffer(out: dict[str, Any]) -> None:
    assert out["edit"]["isError"] is False, out["edit"]
    [listed] = out["listed"]
    assert listed["callId"] == "nv-edit" and listed["tool"] == "edit_file"
    assert listed["files"] == [
        {"path": "notes.md", "change": "modified", "fromPath": None, "notStored": False}
    ]
    assert "Revert this call" in out["activity_actions"]
    # A read has no checkpoint to revert; a call whose result is not here has nothing to show.
    assert out["read_actions"] == ["Show the result"]
    assert out["foreign_actions"] == []
    # The confirmation says what will change before anything does.
    prompt = out["prompts"][-1]
    assert "Revert call nv-edit (edit_file)?" in prompt and "modified notes.md" in prompt
    assert out["items"][-1] == ["Revert this call", "Cancel"]

    outcome = out["outcome"]
    assert outcome["reverted"] == ["notes.md"] and outcome["conflicts"] == [], outcome
    # The agent's line is back to what it was; the user's unsaved lines on both sides stay.
    assert out["after_revert"] == [
        "typed by the user, not saved",
        "# Notes",
        "",
        "line three",
        "line four",
        "line five",
        "more unsaved text",
    ]
    assert out["modified_after_revert"] is True
    assert out["disk_after_revert"] == NOTES_ON_DISK
    # One undo takes the revert back, and only it.
    assert out["after_undo"] == out["before_revert"]
