"""The states a writer's checkpoint records (recorder.py): each path's bytes and mode before
and after the call, read from the editor's buffers or beneath the root, or handed over by
the publish itself.

A plain replace on disk (edit_file, write_file over a file of up to 256 KiB) is not read
again for its checkpoint: the publish reads the file whole at its last check, right before
the rename (fs/diskwrite.py), and knows the bytes it renames in; it hands both over
(`PublishedStates`; hashed after the rename, so the window before it stays as short). They
are also exactly what the call swapped, where a read before the publish or after it could
take in another program's change. A path the publish says nothing of was not changed by
it (it stopped before its last check)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from lsp_server.checkpoints.file_states import Lstats, disk_state, git_mode
from lsp_server.checkpoints.restore import Current, Present
from lsp_server.checkpoints.shadow import objects
from lsp_server.checkpoints.shadow.large_files import pointer_of
from lsp_server.checkpoints.shadow.tree_changes import Entry
from lsp_server.checkpoints.windows import WriteWindow
from lsp_server.fs import textio

if TYPE_CHECKING:
    from lsp_server.runtime.file_service import DocumentSource


def editor_states(
    documents: DocumentSource | None, paths: Sequence[Path], window: WriteWindow
) -> dict[Path, Current]:
    """The paths open in the editor, read from its buffers (on the event loop)."""
    found: dict[Path, Current] = {}
    if window.reads != "editor" or documents is None:
        return found
    for path in paths:
        document = documents.open_document(path)
        if document is not None:
            data = textio.encode_like(document.text, document.encoding, document.bom)
            found[path] = Present.of(data, git_mode(path) or 0o100644)
    return found


@attrs.frozen
class StateReader:
    """Reads paths' states for a writer's window, keeping their bytes in it."""

    root_of: Callable[[Path], Path | None]
    max_file_bytes: int

    def read(
        self, paths: Sequence[Path], window: WriteWindow, editor: dict[Path, Current], stats: Lstats
    ) -> dict[Path, Entry | None]:
        """Each path's state; None outside the roots, absent or a folder (blocking).
        `stats`: lstats just taken (`small_lstats`), else {}."""
        states: dict[Path, Entry | None] = {}
        for path in paths:
            root = self.root_of(path)
            if root is None or (path in stats and stats[path] is None):
                states[path] = None
                continue
            current = (
                editor[path]
                if path in editor
                else disk_state(path, self.max_file_bytes, stats.get(path), root)
            )
            states[path] = keep(window, path, current)
        return states


def keep(window: WriteWindow, path: Path, current: Current) -> Entry | None:
    """The entry of a state read, its bytes (or its pointer's) kept in the window."""
    if current is None or current.mode == stat.S_IFDIR:
        return None
    data, oid = current.data, current.oid
    if data is None:  # over the size limit: the pointer stands for it
        data = pointer_of(path)
        oid = objects.object_id("blob", data)
        window.pointers.add(oid)
    window.blobs[oid] = data
    return Entry(oid, current.mode)


def reported_paths(
    moves: Sequence[tuple[Path, Path | None]],
    reported: Collection[Path],
    root_of: Callable[[Path], Path | None],
    max_bytes: int,
) -> set[Path]:
    """The paths of `reported` whose states the publish hands over: in a root, named once in
    the call (a path also moved from or to is read as before), and files of at most
    `max_bytes` (a larger one is read before the publish, not inside its last check)."""
    named: dict[Path, int] = {}
    for source, destination in moves:
        for path in (source, destination):
            if path is not None:
                named[path] = named.get(path, 0) + 1
    found = set()
    for path in reported:
        if named.get(path) != 1 or root_of(path) is None:
            continue
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size <= max_bytes:
            found.add(path)
    return found


@attrs.define
class PublishedStates:
    """What the publish of a window's paths tells the checkpoint (core/tool_output.py's
    PublishWitness): each pending path's state right before the rename and what it renamed
    in. Called in the publish's worker thread, one path at a time."""

    window: WriteWindow
    reader: StateReader
    documents: DocumentSource | None
    failed: Callable[[str], None]

    def in_editor(self, path: Path) -> None:
        """The change goes to the open buffer: its state is read now, as for any buffer."""
        if path in self.window.pending:
            self._read_now(path)

    def replacing(self, path: Path, data: bytes | None, st_mode: int) -> None:
        """`path` held `data` at the last check (None: not read, too large to hash); the
        rename follows at once, so the bytes are only kept here (hashed after it)."""
        window = self.window
        if path not in window.pending:
            return
        if data is None or len(data) > self.reader.max_file_bytes:
            self._read_now(path)  # grown since before_write: read as any large file
            return
        window.pending.discard(path)
        window.checked[path] = (data, st_mode)

    def replaced(self, path: Path, data: bytes, st_mode: int) -> None:
        """The rename put `data` at `path`, with `st_mode`."""
        window = self.window
        if path not in window.checked:
            return  # read after the publish, as any path
        take_checked(window, [path])
        if len(data) <= self.reader.max_file_bytes:
            window.after[path] = keep(window, path, Present.of(data, _git_mode(st_mode)))

    def _read_now(self, path: Path) -> None:
        window = self.window
        window.pending.discard(path)
        try:
            editor = editor_states(self.documents, [path], window)
            window.before.update(self.reader.read([path], window, editor, {}))
        except OSError as exc:
            window.broken = True
            self.failed(f"recording the files before the write failed ({str(exc).strip()})")


def take_checked(window: WriteWindow, paths: Collection[Path] | None = None) -> None:
    """The states the last checks handed over become states before the call (all of
    them: also where the publish failed after its check, its after state then read)."""
    for path in list(window.checked if paths is None else paths):
        data, st_mode = window.checked.pop(path)
        window.before[path] = keep(window, path, Present.of(data, _git_mode(st_mode)))


def _git_mode(st_mode: int) -> int:
    return 0o100755 if st_mode & 0o100 else 0o100644
