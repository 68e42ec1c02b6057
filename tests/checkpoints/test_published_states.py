"""A writer's checkpoint takes the states of a plain replace from the publish itself
(checkpoints/write_states.py): the bytes the last check read right before the rename and
the bytes renamed in. Nothing reads the file again for it, and what is recorded is the
exact pair the call swapped, even when another program changes the file a moment later.
Where the publish cannot say (it stopped before the rename, or the file is open in the
editor) the states are read as before."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_server.checkpoints import write_states
from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.records import FileRecord
from lsp_server.checkpoints.shadow import objects
from lsp_server.config.tree import CheckpointsConfig, Limits
from lsp_server.core.errors import ToolError
from lsp_server.core.tool_output import FileChange
from lsp_server.fs import diskwrite
from lsp_server.fs.textio import BufferVersion, TextFile
from lsp_server.fs.workspace import Workspace
from lsp_server.runtime.context import Caller
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.sessions.observations import Observations

pytestmark = pytest.mark.timeout(60)

OLD, NEW = b"line 1\r\nline 2\r\n", b"line 1\r\nline 2 edited\r\n"


def blob(data: bytes) -> str:
    return objects.object_id("blob", data)


def setup(tmp_path: Path) -> tuple[Path, Path, Checkpoints, FileService]:
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "run.sh"
    path.write_bytes(OLD)
    path.chmod(0o755)
    workspace = Workspace([root])
    checkpoints = Checkpoints(workspace, CheckpointsConfig(), tmp_path / "state")
    return root, path, checkpoints, FileService(workspace, Observations(), Limits(), None)


async def recorded(checkpoints: Checkpoints, call_id: str) -> list[FileRecord]:
    found = await checkpoints.find(call_id)
    return [record for item in found for record in item.checkpoint.files]


async def edit(
    checkpoints: Checkpoints, files: FileService, path: Path, call_id: str, after: str
) -> bool:
    before = await files.read_text(path)
    change = FileChange(path, before, after)
    window = await checkpoints.before_write(
        call_id, "s", "edit_file", [(path, None)], reported=[path]
    )
    try:
        await files.publish(change, checkpoints.witness(window))
    finally:
        made = await checkpoints.after_write(window)
    return made


async def test_a_replace_is_recorded_as_swapped_without_reading_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, path, checkpoints, files = setup(tmp_path)
    reads: list[Path] = []
    real_disk_state = write_states.disk_state

    def counted(where: Path, *args: object, **kwargs: object) -> object:
        reads.append(where)
        return real_disk_state(where, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(write_states, "disk_state", counted)
    real_replaced = write_states.PublishedStates.replaced

    def then_someone_appends(self: write_states.PublishedStates, *args: object) -> None:
        real_replaced(self, *args)  # type: ignore[arg-type]
        with path.open("ab") as other_program:  # right after the rename, before the record
            other_program.write(b"appended by another program\r\n")

    monkeypatch.setattr(write_states.PublishedStates, "replaced", then_someone_appends)

    assert await edit(checkpoints, files, path, "c-1", NEW.decode())
    assert reads == []  # neither before the publish nor after it
    (record,) = await recorded(checkpoints, "c-1")
    assert record.change == "modified" and record.path == "run.sh"
    assert record.before is not None and record.after is not None
    assert (record.before.oid, record.before.mode) == (blob(OLD), 0o100755)
    # What the call wrote, not the other program's line after it.
    assert (record.after.oid, record.after.mode) == (blob(NEW), 0o100755)
    await checkpoints.settle()


async def test_a_publish_that_stops_before_the_rename_records_nothing(tmp_path: Path) -> None:
    _, path, checkpoints, files = setup(tmp_path)
    before = await files.read_text(path)
    path.write_bytes(b"changed by another program\n")  # after the read: the publish refuses
    window = await checkpoints.before_write(
        "c-1", "s", "edit_file", [(path, None)], reported=[path]
    )
    with pytest.raises(ToolError):
        await files.publish(FileChange(path, before, NEW.decode()), checkpoints.witness(window))
    assert not await checkpoints.after_write(window)
    assert await recorded(checkpoints, "c-1") == []
    assert path.read_bytes() == b"changed by another program\n"
    await checkpoints.settle()


async def test_a_publish_that_fails_after_the_rename_is_still_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, path, checkpoints, files = setup(tmp_path)

    def disk_full(dir_fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(diskwrite.beneath, "fsync_dir", disk_full)  # after the rename
    with pytest.raises(OSError):
        await edit(checkpoints, files, path, "c-1", NEW.decode())
    assert path.read_bytes() == NEW
    (record,) = await recorded(checkpoints, "c-1")
    assert record.before is not None and record.after is not None
    assert (record.before.oid, record.after.oid) == (blob(OLD), blob(NEW))
    await checkpoints.settle()


async def test_a_file_too_large_to_hash_is_read_at_the_check(tmp_path: Path) -> None:
    root, path, checkpoints, _ = setup(tmp_path)
    files = FileService(Workspace([root]), Observations(), Limits(hash_limit_bytes=4), None)
    assert await edit(checkpoints, files, path, "c-1", NEW.decode())
    (record,) = await recorded(checkpoints, "c-1")
    assert record.before is not None and record.after is not None
    assert (record.before.oid, record.after.oid) == (blob(OLD), blob(NEW))
    await checkpoints.settle()


class OneBuffer:
    """An editor with one open buffer (the DocumentSource protocol), applying what it is
    given to its text: no real editor needed for the recorder's side of it."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text, self.version = path, text, 1

    def open_document(self, path: Path) -> TextFile | None:
        if path != self.path:
            return None
        version = BufferVersion("file://" + str(path), self.version, "")
        return TextFile(path, self.text, "utf-8", b"", version, source=self.text)

    async def publish(self, change: FileChange, observations: object, caller: Caller) -> str:
        assert change.after is not None
        self.text, self.version = change.after, self.version + 1
        return "applied in the editor"


async def test_a_file_open_in_the_editor_is_read_from_its_buffer(tmp_path: Path) -> None:
    root, path, checkpoints, _ = setup(tmp_path)
    editor = OneBuffer(path, "unsaved text\n")
    checkpoints.documents = editor
    files = FileService(Workspace([root]), Observations(), Limits(), editor)
    assert await edit(checkpoints, files, path, "c-1", "edited in the buffer\n")
    (record,) = await recorded(checkpoints, "c-1")
    assert record.before is not None and record.after is not None
    assert record.before.oid == blob(b"unsaved text\n")
    assert record.after.oid == blob(b"edited in the buffer\n")
    assert path.read_bytes() == OLD and os.access(path, os.X_OK)  # the disk untouched
    await checkpoints.settle()
