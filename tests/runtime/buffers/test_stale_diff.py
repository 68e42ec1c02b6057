"""A stale-version refusal shows what changed since the read (issue 17, 12): a short diff
of the change on disk or in the editor's buffer, bounded, over the real protocol."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lsp_server.runtime.sessions.observations import SEEN_TEXT_CHARS
from tests.fake_editor import EDITOR_CAPABILITIES, FakeEditor
from tests.helpers import lsp_call, lsp_session, text_of
from tests.runtime.buffers.test_buffers_lsp import BYPASS, editor_session

pytestmark = pytest.mark.timeout(120)

EDIT = {"path": "a.py", "old_string": "value = 30", "new_string": "value = 300"}
# A whole-file write keeps the strict rule (an edit of unchanged lines merges instead:
# tests/tools/files/test_edit_merge.py).
WRITE = {"path": "a.py", "content": "value = 300\n"}
COMPLETE = "the diff above is complete and this session now counts as having read the new content"


def numbered(count: int) -> str:
    return "".join(f"value = {i}\n" for i in range(count))


def stale(result: dict[str, Any]) -> str:
    assert result["isError"], text_of(result)
    assert result["error"]["code"] == "FS_STALE_VERSION", result["error"]
    return text_of(result)


async def test_a_disk_change_since_the_read_is_shown_as_a_diff(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text(numbered(50))
    async with lsp_session(tmp_path, BYPASS) as client:
        await lsp_call(client, "read_file", {"path": "a.py", "limit": 5})
        path.write_text(numbered(50).replace("value = 20\n", "value = 20  # checked\nextra\n"))
        refused = stale(await lsp_call(client, "write_file", WRITE))
        again = await lsp_call(client, "write_file", WRITE)
    assert (
        "What changed since this session read it:\n--- as read\n+++ now\n@@ -19,5 +19,6 @@\n"
        in (refused)
    )
    assert "\n-value = 20\n+value = 20  # checked\n+extra\n value = 21\n" in refused
    assert "[end of the diff]; " + COMPLETE in refused
    # The complete diff told the model the new content: the same write now applies.
    assert not again["isError"], text_of(again)
    assert path.read_text() == "value = 300\n"


async def test_a_long_diff_is_cut_and_the_model_must_read_again(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text(numbered(200))
    async with lsp_session(tmp_path, BYPASS) as client:
        await lsp_call(client, "read_file", {"path": "a.py"})
        path.write_text("".join(f"renamed = {i}\n" for i in range(100)) + numbered(200)[1190:])
        refused = stale(await lsp_call(client, "write_file", WRITE))
        again = await lsp_call(client, "write_file", WRITE)
    diff = refused.split("What changed since this session read it:\n", 1)[1]
    shown = diff.split("\n[... ", 1)[0].splitlines()
    assert len(shown) == 40 and shown[:2] == ["--- as read", "+++ now"]
    assert "more diff lines not shown; read the file to see the rest]" in diff
    assert refused.endswith(
        "read the file again (any window), then redo the edit against what is there now"
    )
    assert stale(again)  # a cut diff does not count as a read


async def test_a_change_in_a_large_file_says_how_many_lines_differ(tmp_path: Path) -> None:
    count = SEEN_TEXT_CHARS // 10 + 1000  # over the size whose text is kept
    path = tmp_path / "a.py"
    path.write_text(numbered(count))
    assert path.stat().st_size > SEEN_TEXT_CHARS
    async with lsp_session(tmp_path, BYPASS) as client:
        await lsp_call(client, "read_file", {"path": "a.py", "limit": 1})
        now = numbered(count).replace("value = 7\n", "value = seven\n")
        now = now.replace("value = 9\n", "") + "value = last\n"
        path.write_text(now)
        refused = stale(await lsp_call(client, "edit_file", EDIT))
    assert (
        f"changed: 2 lines differ (2 removed, 2 added; {count} -> {count} lines, "
        f"{len(numbered(count))} -> {len(now)} chars)"
    ) in refused
    assert "--- as read" not in refused


async def test_a_buffer_change_since_the_read_is_shown_as_a_diff(tmp_path: Path) -> None:
    path = tmp_path / "ws" / "notes.txt"
    path.parent.mkdir()
    path.write_text("alpha\nbeta\ngamma\n")
    edit = {"path": "notes.txt", "content": "alpha\ntyped after the read\nBETA\ngamma\n"}
    async with editor_session(path.parent) as editor:
        editor.open(path)
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        editor.type_line(path, 1, "typed after the read")
        refused = stale(await lsp_call(editor.client, "write_file", edit))
        again = await lsp_call(editor.client, "write_file", edit)
        buffer = editor.text(path)
    assert (
        "changed since this session read it (the editor buffer changed; "
        "last by the user in the editor)" in refused
    )
    assert "@@ -1,3 +1,4 @@\n alpha\n+typed after the read\n beta\n gamma\n[end of the diff]" in (
        refused
    )
    assert not again["isError"], text_of(again)
    assert buffer == "alpha\ntyped after the read\nBETA\ngamma\n"


def approving_editor(while_asked: Callable[[FakeEditor], None]) -> FakeEditor:
    """An editor whose user types into the buffer while the approval prompt is open."""
    editor = FakeEditor()

    async def approve(params: dict[str, Any]) -> dict[str, Any]:
        while_asked(editor)
        return {"decision": "allow_once"}

    editor.script = approve
    return editor


async def test_a_buffer_change_during_the_approval_is_shown_as_a_diff(tmp_path: Path) -> None:
    path = tmp_path / "ws" / "notes.txt"
    path.parent.mkdir()
    path.write_text("alpha\nbeta\ngamma\n")
    editor = approving_editor(lambda editor: editor.type_line(path, 3, "delta"))
    edit = {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
    async with lsp_session(
        path.parent,
        {"policy": {"mode": "default"}},
        experimental={"saveDocument": True, "approvals": True},
        client_factory=editor.factory,
        capabilities=EDITOR_CAPABILITIES,
    ) as client:
        editor.open(path)
        await lsp_call(client, "read_file", {"path": "notes.txt"})
        refused = stale(await lsp_call(client, "edit_file", edit))
    assert "changed in the editor since this session read it (unsaved edits)" in refused
    assert " beta\n gamma\n+delta\n[end of the diff]" in refused
    assert editor.apply_edits == []  # refused before anything was sent to the editor


async def test_a_disk_change_during_the_approval_is_shown_as_a_diff(tmp_path: Path) -> None:
    path = tmp_path / "ws" / "notes.txt"
    path.parent.mkdir()
    path.write_text("alpha\nbeta\ngamma\n")
    editor = approving_editor(lambda _: path.write_text("alpha\nbeta\ngamma\ndelta\n"))
    edit = {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
    async with lsp_session(
        path.parent,
        {"policy": {"mode": "default"}},
        experimental={"approvals": True},
        client_factory=editor.factory,
    ) as client:
        await lsp_call(client, "read_file", {"path": "notes.txt"})
        refused = stale(await lsp_call(client, "edit_file", edit))
        again = await lsp_call(client, "edit_file", edit)
    assert "notes.txt changed since this session read it (size 17 -> 23 bytes" in refused
    assert " beta\n gamma\n+delta\n[end of the diff]; " + COMPLETE in refused
    assert not again["isError"], text_of(again)
    assert path.read_text() == "alpha\nBETA\ngamma\ndelta\n"
