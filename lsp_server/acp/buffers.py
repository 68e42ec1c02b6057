"""The editor's own fs/* as the runtime's document source, when the editor declared them:
what an agent reads is the editor's text (its unsaved buffer, if it has one), and a write to
a file whose buffer holds unsaved text goes into that buffer through the editor's
fs/write_text_file, so the user's other unsaved edits are neither lost nor overwritten.

Before each fs/* call of the agent, the ACP face asks the editor for the file
(`prefetch`). Where the editor's text equals the disk (no unsaved changes, or not open),
toolhost reads and writes the disk itself: atomic, encoding, BOM, line endings and mode kept,
checkpointed; the editor follows the disk as editors do. Only where they differ is the
buffer the source (a BufferVersion over the text's hash: a stale check still refuses a write
when the buffer changed since the agent read it).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from lsp_server.acp.peers import Peer, PeerError, PeerGone
from lsp_server.core.errors import EDITOR_REFUSED, FS_STALE_VERSION, ToolError
from lsp_server.fs import textio
from lsp_server.fs.textio import BufferVersion, TextFile
from lsp_server.runtime.buffers.buffer_edits import same_text, text_hash

if TYPE_CHECKING:
    from lsp_server.core.tool_output import FileChange
    from lsp_server.runtime.context import Caller
    from lsp_server.runtime.sessions.observations import Observations

log = logging.getLogger(__name__)

READ = "fs/read_text_file"
WRITE = "fs/write_text_file"
_TIMEOUT = 30.0


def buffer_file(path: Path, text: str) -> TextFile:
    version = BufferVersion(path.as_uri(), 0, text_hash(text))
    return TextFile(path, text, "utf-8", b"", version, source="editor")


def disk_state(path: Path) -> tuple[bool, str | None]:
    """Whether `path` exists, and its text (None: missing, unreadable or not text)."""
    try:
        data = path.read_bytes()
    except OSError:
        return path.exists(), None
    try:
        text, _, _ = textio.decode(data)
    except textio.DecodeError:
        return True, None
    return True, text


class EditorBuffers:
    """files.DocumentSource over the editor's fs/* (one per runtime)."""

    def __init__(self, editor: Peer, reads: bool, writes: bool) -> None:
        self.editor = editor
        self.reads = reads
        self.writes = writes
        self._unsaved: dict[Path, TextFile] = {}

    async def prefetch(self, session_id: str, path: Path) -> None:
        """Ask the editor for `path`; keep its text when it differs from the disk."""
        if not self.reads:
            return
        answer = await self._ask(READ, {"sessionId": session_id, "path": str(path)})
        content = answer.get("content") if isinstance(answer, dict) else None
        exists, disk = await anyio.to_thread.run_sync(disk_state, path)
        if (
            not isinstance(content, str)
            or not exists
            or (disk is not None and same_text(content, disk))
        ):
            # The disk is the source (a file the disk has not yet is created there).
            self._unsaved.pop(path, None)
            return
        self._unsaved[path] = buffer_file(path, content)

    def open_document(self, path: Path) -> TextFile | None:
        return self._unsaved.get(path)

    async def publish(
        self, change: FileChange, observations: Observations, caller: Caller
    ) -> str | FileChange | None:
        """A write the editor's own fs/* request made (its session is the caller's) goes into
        the buffer of a file with unsaved text; any other call's write to it is refused."""
        buffer = self._unsaved.get(change.path)
        session_id = caller.editor_session
        if buffer is None or change.after is None or change.destination is not None:
            return None
        rel = change.path.name
        if not self.writes or session_id is None:
            raise ToolError(
                FS_STALE_VERSION,
                f"{rel} has unsaved changes in the editor, which cannot take a write",
                "ask the user to save the file, then read it again",
            )
        await self.prefetch(session_id, change.path)  # did the buffer move on meanwhile?
        now = self._unsaved.get(change.path)
        if change.before is not None and (now is None or now.text != change.before.text):
            raise ToolError(
                FS_STALE_VERSION,
                f"{rel} changed in the editor since this session read it",
                "read the file again, then redo the edit against what is there now",
            )
        params = {"sessionId": session_id, "path": str(change.path), "content": change.after}
        try:
            await self.editor.request(WRITE, params, _TIMEOUT)
        except (PeerError, PeerGone, TimeoutError) as exc:
            raise ToolError(
                EDITOR_REFUSED,
                f"the editor did not take the write to {rel} ({exc})",
                "read the file again and retry, or ask the user to save it first",
            ) from None
        written = buffer_file(change.path, change.after)
        self._unsaved[change.path] = written
        observations.record_present(change.path, written.version, change.after)
        return f"[written to the editor's unsaved buffer of {rel}; the disk is unchanged]"

    async def _ask(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return await self.editor.request(method, params, _TIMEOUT)
        except (PeerError, PeerGone, TimeoutError) as exc:
            log.debug("the editor could not answer %s: %s", method, exc)
            return None
