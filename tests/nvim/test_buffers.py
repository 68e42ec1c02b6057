"""Editor buffers in real Neovim: the agent edits what the user is editing, nothing is lost."""

from __future__ import annotations

from typing import Any

import pytest

from tests.nvim.conftest import make_neovim

pytestmark = pytest.mark.real_client


@pytest.fixture(scope="module")
def out(nvim_program: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One Neovim session (tests/nvim/lua/buffers.lua) whose observations the tests check."""
    neovim = make_neovim(nvim_program, tmp_path_factory.mktemp("buffers"))
    return neovim.run("buffers").out


NOTES_ON_DISK = "# Notes\n\nline three\nline four\nline five\n"


def test_agent_edit_keeps_unsaved_user_text_and_undoes(out: dict[str, Any]) -> None:
    assert out["attached"]
    # read_file saw the unsaved buffer, not the disk.
    assert "typed by the user, not saved" in out["read_text"]

    edit = out["edit"]
    assert edit["isError"] is False, edit
    assert out["after_edit"] == [
        "typed by the user, not saved",
        "# Notes",
        "",
        "line three",
        "line four, edited by the agent",
        "line five",
    ]
    # The user's text is unsaved, so nothing was written: the disk is behind, and says so.
    assert out["modified_after_edit"] is True
    assert out["disk_after_edit"] == NOTES_ON_DISK
    assert "disk is behind" in "".join(p["text"] for p in edit["content"])
    # One undo takes back the agent's edit and only that.
    assert out["after_undo"] == [
        "typed by the user, not saved",
        "# Notes",
        "",
        "line three",
        "line four",
        "line five",
    ]


def test_edit_after_user_typed_merges_or_is_refused(out: dict[str, Any]) -> None:
    merged = out["merged"]
    assert merged["isError"] is False, merged
    said = "\n".join(p.get("text", "") for p in merged["content"])
    assert "also changed since your read" in said and "the user in the editor" in said, said
    assert out["after_merged"][-2:] == ["LINE FIVE", "another unsaved line"]
    stale = out["stale"]
    assert stale["isError"] is True
    assert stale["error"]["code"] == "FS_EDIT_CONFLICT", stale["error"]
    assert out["after_stale"][0] == "the user's first line"


def test_clean_buffer_is_saved_by_the_editor(out: dict[str, Any]) -> None:
    assert out["clean_edit"]["isError"] is False, out["clean_edit"]
    assert out["clean_buffer"] == ["hi from the fixture"]
    assert out["clean_modified"] is False
    assert out["clean_disk"] == "hi from the fixture\n"


def test_plugin_refuses_an_edit_for_an_older_buffer_version(out: dict[str, Any]) -> None:
    assert out["handler_replaced"] is True
    assert out["refusal"]["applied"] is False
    assert "version" in out["refusal"]["failureReason"]
    assert out["refusal_kept_buffer"] is True
