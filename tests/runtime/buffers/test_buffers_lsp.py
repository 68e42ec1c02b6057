"""Editor buffers over the real protocol: `toolhost serve` driven by pytest-lsp, with an
FakeEditor (tests/fake_editor.py) answering workspace/applyEdit and saveDocument."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig

from tests.fake_editor import EDITOR_CAPABILITIES, FakeEditor
from tests.helpers import SERVER_COMMAND, lsp_call, lsp_session, make_test_client, text_of

BYPASS: dict[str, Any] = {"policy": {"mode": "bypass"}}


@asynccontextmanager
async def editor_session(
    root: Path,
    options: dict[str, Any] | None = None,
    save_document: bool = True,
    capabilities: types.ClientCapabilities = EDITOR_CAPABILITIES,
) -> AsyncIterator[FakeEditor]:
    editor = FakeEditor()
    async with lsp_session(
        root,
        options or BYPASS,
        experimental={"saveDocument": save_document},
        client_factory=editor.factory,
        capabilities=capabilities,
    ):
        yield editor


def notes(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "notes.txt"
    path.write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    return path


async def test_unsaved_buffer_is_what_read_file_returns(tmp_path: Path) -> None:
    path = notes(tmp_path)
    async with editor_session(path.parent) as editor:
        editor.open(path)
        editor.type_line(path, 1, "typed by the user")
        result = await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
    assert not result["isError"], result
    assert "typed by the user" in text_of(result)
    assert path.read_text() == "alpha\nbeta\ngamma\n"


async def test_edit_of_a_dirty_buffer_goes_through_apply_edit(tmp_path: Path) -> None:
    path = notes(tmp_path)
    async with editor_session(path.parent) as editor:
        editor.open(path)
        editor.type_line(path, 0, "typed by the user")
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        version = editor.version(path)
        result = await lsp_call(
            editor.client,
            "edit_file",
            {"path": "notes.txt", "old_string": "gamma", "new_string": "GAMMA"},
        )
        buffer = editor.text(path)
        # The observation follows the edit: a second edit needs no re-read.
        again = await lsp_call(
            editor.client,
            "edit_file",
            {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"},
        )
        final = editor.text(path)
    assert not result["isError"], result
    [sent] = editor.apply_edits[:1]
    [document_edit] = sent.edit.document_changes or []
    assert isinstance(document_edit, types.TextDocumentEdit)
    assert document_edit.text_document.uri == path.as_uri()
    assert document_edit.text_document.version == version
    assert [(e.range.start.line, e.range.end.line, e.new_text) for e in document_edit.edits] == [
        (3, 4, "GAMMA\n")  # type: ignore[union-attr]
    ]
    assert buffer == "typed by the user\nalpha\nbeta\nGAMMA\n"
    # The user's text is unsaved: the buffer is not saved, the disk is behind.
    assert editor.saves == []
    assert path.read_text() == "alpha\nbeta\ngamma\n"
    assert "disk is behind" in text_of(result)
    assert not again["isError"], again
    assert final == "typed by the user\nalpha\nBETA\nGAMMA\n"


async def test_buffer_changed_since_read_is_stale(tmp_path: Path) -> None:
    """A whole-file write keeps the strict rule: the user's typing since the read stops it."""
    path = notes(tmp_path)
    async with editor_session(path.parent) as editor:
        editor.open(path)
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        editor.type_line(path, 0, "typed after the read")
        result = await lsp_call(
            editor.client, "write_file", {"path": "notes.txt", "content": "replaced\n"}
        )
        buffer = editor.text(path)
    assert result["isError"]
    assert result["error"]["code"] == "FS_STALE_VERSION"
    assert "by the user in the editor" in text_of(result)
    assert editor.apply_edits == []
    assert buffer == "typed after the read\nalpha\nbeta\ngamma\n"


async def test_an_edit_beside_the_users_typing_merges(tmp_path: Path) -> None:
    """An edit of lines the user did not touch since the read applies to the buffer as it
    is now and says so; one of the line the user typed in is a conflict naming the user."""
    path = notes(tmp_path)
    async with editor_session(path.parent) as editor:
        editor.open(path)
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        editor.type_line(path, 0, "typed after the read")
        merged = await lsp_call(
            editor.client,
            "edit_file",
            {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"},
        )
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        editor.type_line(path, 3, "GAMMA by hand")
        clash = await lsp_call(
            editor.client,
            "edit_file",
            {"path": "notes.txt", "old_string": "BETA\ngamma", "new_string": "B\nG"},
        )
        buffer = editor.text(path)
    assert not merged["isError"], text_of(merged)
    assert "line 1, by the user in the editor" in text_of(merged)
    assert clash["isError"] and clash["error"]["code"] == "FS_EDIT_CONFLICT", text_of(clash)
    assert "by the user in the editor" in text_of(clash)
    assert buffer.startswith("typed after the read\nalpha\nBETA\n")
    assert "GAMMA by hand" in buffer


async def test_editor_refuses_an_edit_for_an_older_version(tmp_path: Path) -> None:
    path = notes(tmp_path)
    async with editor_session(path.parent) as editor:
        editor.open(path)
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        # The user types between the server's check and the editor applying the edit.
        editor.before_apply = lambda: editor.type_line(path, 0, "typed meanwhile")
        result = await lsp_call(
            editor.client,
            "edit_file",
            {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"},
        )
        buffer = editor.text(path)
    assert result["isError"]
    assert result["error"]["code"] == "editor.refused"
    assert "buffer at version" in result["error"]["message"]
    assert buffer == "typed meanwhile\nalpha\nbeta\ngamma\n"
    assert path.read_text() == "alpha\nbeta\ngamma\n"


async def test_clean_buffer_is_saved_so_the_disk_matches(tmp_path: Path) -> None:
    path = notes(tmp_path)
    async with editor_session(path.parent) as editor:
        editor.open(path)
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        result = await lsp_call(
            editor.client,
            "edit_file",
            {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"},
        )
        buffer = editor.text(path)
    assert not result["isError"], result
    assert len(editor.apply_edits) == 1
    assert editor.saves == [path.as_uri()]
    assert buffer == "alpha\nBETA\ngamma\n"
    assert path.read_text() == buffer
    assert "saved" in text_of(result)


async def test_clean_buffer_without_save_document_says_disk_is_behind(tmp_path: Path) -> None:
    path = notes(tmp_path)
    async with editor_session(path.parent, save_document=False) as editor:
        editor.open(path)
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        result = await lsp_call(
            editor.client,
            "edit_file",
            {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"},
        )
    assert not result["isError"], result
    assert editor.saves == []
    assert path.read_text() == "alpha\nbeta\ngamma\n"
    assert "disk is behind" in text_of(result)


async def test_write_file_over_unseen_unsaved_changes_is_stale(tmp_path: Path) -> None:
    path = notes(tmp_path)
    draft = path.parent / "draft.txt"
    async with editor_session(path.parent) as editor:
        editor.open(path)
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        editor.type_line(path, 2, "unsaved work")
        overwrite = await lsp_call(
            editor.client, "write_file", {"path": "notes.txt", "content": "replaced\n"}
        )
        # A new buffer, never saved: the file does not exist on disk yet.
        editor.open(draft, "a draft the user has not saved\n")
        create = await lsp_call(
            editor.client, "write_file", {"path": "draft.txt", "content": "agent text\n"}
        )
        buffer = editor.text(path)
    assert overwrite["isError"] and overwrite["error"]["code"] == "FS_STALE_VERSION"
    assert create["isError"] and create["error"]["code"] == "FS_STALE_VERSION"
    assert buffer == "alpha\nbeta\nunsaved work\ngamma\n"
    assert path.read_text() == "alpha\nbeta\ngamma\n"
    assert not draft.exists()
    assert editor.apply_edits == []


async def test_edits_via_disk_ignore_buffers(tmp_path: Path) -> None:
    path = notes(tmp_path)
    options = {**BYPASS, "edits": {"via": "disk"}}
    async with editor_session(path.parent, options) as editor:
        editor.open(path)
        editor.type_line(path, 0, "typed by the user")
        read = await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        result = await lsp_call(
            editor.client,
            "edit_file",
            {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"},
        )
    assert "typed by the user" not in text_of(read)
    assert not result["isError"], result
    assert editor.apply_edits == []
    assert path.read_text() == "alpha\nBETA\ngamma\n"


async def test_client_without_apply_edit_gets_disk_writes(tmp_path: Path) -> None:
    path = notes(tmp_path)
    async with editor_session(path.parent, capabilities=types.ClientCapabilities()) as editor:
        editor.open(path)
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        result = await lsp_call(
            editor.client,
            "edit_file",
            {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"},
        )
    assert not result["isError"], result
    assert editor.apply_edits == []
    assert path.read_text() == "alpha\nBETA\ngamma\n"


async def test_empty_lua_table_as_options_still_starts(tmp_path: Path) -> None:
    """Neovim encodes an empty Lua table as []: the server must start anyway."""
    path = notes(tmp_path)
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(tmp_path / "state")}
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=make_test_client, server_env=env
    )
    client = await config.start()
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=path.parent.as_uri(),
                initialization_options={"toolhost": []},
            )
        )
        result = await lsp_call(client, "read_file", {"path": "notes.txt"})
        await client.shutdown_session()
    finally:
        await client.stop()  # type: ignore[no-untyped-call]
    assert not result["isError"], result


async def test_file_read_from_disk_then_opened_unchanged_is_current(tmp_path: Path) -> None:
    path = notes(tmp_path)
    async with editor_session(path.parent) as editor:
        await lsp_call(editor.client, "read_file", {"path": "notes.txt"})
        editor.open(path)  # the user opens the file the agent read; nothing changed
        result = await lsp_call(
            editor.client,
            "edit_file",
            {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"},
        )
        applied = len(editor.apply_edits)
        editor.type_line(path, 0, "typed after opening")
        stale = await lsp_call(
            editor.client, "write_file", {"path": "notes.txt", "content": "replaced\n"}
        )
    assert not result["isError"], result
    assert applied == 1
    assert path.read_text() == "alpha\nBETA\ngamma\n"
    assert stale["isError"] and stale["error"]["code"] == "FS_STALE_VERSION"
