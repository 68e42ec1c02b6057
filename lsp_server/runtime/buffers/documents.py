"""Editor buffers as the document source: reads see unsaved text, edits go through the editor.

The client tells the server about every open file (didOpen/didChange/didClose, incremental
sync; pygls keeps the text in `server.workspace`). For an open file:

- reads return the buffer, versioned as (document version, sha256 of the text);
- an edit is sent as `workspace/applyEdit` with a versioned TextDocumentEdit, so the editor
  refuses it when its buffer moved on (-> FS_STALE_VERSION); the user's other unsaved text
  stays, and the editor's undo can take the agent's edit back;
- when the buffer equalled the disk before the edit and the client declared `saveDocument`,
  the server asks the editor to save, so the disk (which bash and tests read) matches;
  otherwise the result says the disk is behind the buffer;
- creating, moving or deleting it on disk is refused while it holds unsaved text.

`edits.via`: "auto" uses buffers when the client declared workspace.applyEdit, "editor"
always does, "disk" ignores buffers (reads and writes use the disk, as for other clients).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import attrs

from lsp_server.core.client import ClientRequestError, UnreadableAnswer
from lsp_server.core.errors import EDITOR_REFUSED, FS_STALE_VERSION, TIMEOUT, ToolError
from lsp_server.core.uris import document_key, uri_to_path
from lsp_server.fs import beneath, textio
from lsp_server.fs.textio import BufferVersion, TextFile
from lsp_server.protocol import TOOLHOST_SAVE_DOCUMENT, SaveDocumentParams
from lsp_server.runtime.approvals.stale_diff import stale_refusal
from lsp_server.runtime.buffers.buffer_edits import same_text, text_edits, text_hash
from lsp_server.runtime.sessions.observations import SeenContent

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from lsp_server.config.tree import EditsConfig
    from lsp_server.core.client import ClientBridge
    from lsp_server.core.tool_output import FileChange
    from lsp_server.fs.workspace import Workspace
    from lsp_server.runtime.context import Caller
    from lsp_server.runtime.sessions.observations import Observations

log = logging.getLogger(__name__)

REREAD = "read the file again (any window), then redo the edit against what is there now"


class OpenDocuments(Protocol):
    """pygls' Workspace, as far as this module uses it."""

    @property
    def text_documents(self) -> dict[str, TextDocument]: ...


class EditorDocuments:
    """The files.DocumentSource of a server whose client reports its open buffers."""

    def __init__(
        self,
        documents: OpenDocuments,
        client: ClientBridge,
        config: EditsConfig,
        workspace: Workspace,
    ) -> None:
        self._documents = documents
        self._client = client
        self._config = config
        self._workspace = workspace
        self._uri_by_path: dict[Path, str] = {}
        # asyncio, not anyio: the didChange handlers that set it run outside any task,
        # where anyio cannot detect the event loop (pygls is asyncio-only anyway).
        self._changed = asyncio.Event()

    # -- what the editor tells us --------------------------------------------------

    def opened(self, uri: str) -> None:
        path = _real_path(uri)
        if path is not None:
            self._uri_by_path[path] = uri
        self._wake()

    def changed(self, uri: str) -> None:
        self._wake()

    def closed(self, uri: str) -> None:
        path = _real_path(uri)
        if path is not None and self._uri_by_path.get(path) == uri:
            del self._uri_by_path[path]
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # -- files.DocumentSource ------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        via = self._config.via
        return via == "editor" or (via == "auto" and self._client.features.apply_edit)

    def _document(self, path: Path) -> tuple[str, TextDocument] | None:
        if not self.enabled:
            return None
        uri = self._uri_by_path.get(path)
        if uri is None:
            return None
        document = self._documents.text_documents.get(document_key(uri))
        if document is None or document.version is None:
            return None
        return uri, document

    def open_document(self, path: Path) -> TextFile | None:
        found = self._document(path)
        if found is None:
            return None
        uri, document = found
        return _text_file(path, uri, document)

    async def publish(
        self, change: FileChange, observations: Observations, caller: Caller
    ) -> str | FileChange | None:
        """Apply a change to an open buffer (files.DocumentSource.publish says the outcomes)."""
        found = self._document(change.path)
        if found is None:
            return None
        uri, document = found
        rel = self._workspace.relative(change.path)
        if change.before is None:
            if document.source:
                raise ToolError(
                    FS_STALE_VERSION,
                    f"{rel} is open in the editor with unsaved text this session has not read",
                    "read it with read_file, then edit it",
                )
            return None
        if change.destination is not None or change.after is None:
            return await self._rebase_on_disk(change, uri, document, rel)
        current = _text_file(change.path, uri, document)
        self._require_current(change.before, current, rel, observations)
        was_clean = await self._matches_disk(change.path, current.text)
        version = await self._apply(uri, document, current, change.after, rel)
        observations.record_present(change.path, version, change.after)
        return await self._settle_disk(uri, change.path, rel, was_clean)

    # -- steps -----------------------------------------------------------------------

    def _require_current(
        self,
        before: TextFile,
        current: TextFile,
        rel: str,
        observations: Observations | None = None,
    ) -> None:
        seen = before.version
        if isinstance(seen, BufferVersion):
            if seen.same_content(current.version):  # type: ignore[arg-type]
                return
        elif same_text(before.text, current.text):
            # Read from disk before the editor opened it; the buffer still holds that text.
            return
        what = "changed in the editor since this session read it (unsaved edits)"
        raise stale_refusal(rel, what, SeenContent.of(before.text), current, observations)

    async def _rebase_on_disk(
        self, change: FileChange, uri: str, document: TextDocument, rel: str
    ) -> FileChange:
        """Moves and deletes act on the disk: only when the buffer holds what the disk has."""
        assert change.before is not None
        self._require_current(change.before, _text_file(change.path, uri, document), rel)
        disk = await anyio.to_thread.run_sync(_read_disk, self._workspace, change.path)
        if disk is None or not same_text(document.source, disk.text):
            raise ToolError(
                FS_STALE_VERSION,
                f"{rel} is open in the editor with unsaved changes",
                "ask the user to save or close it first",
            )
        return attrs.evolve(change, before=disk)

    async def _matches_disk(self, path: Path, text: str) -> bool:
        disk = await anyio.to_thread.run_sync(_read_disk, self._workspace, path)
        return disk is not None and same_text(text, disk.text)

    async def _apply(
        self, uri: str, document: TextDocument, current: TextFile, after: str, rel: str
    ) -> BufferVersion:
        from lsprotocol import types as lsp  # only with an editor, which has it loaded

        assert isinstance(current.version, BufferVersion)
        units = document.position_codec.client_num_units
        # difflib over lines: off the event loop, a large file can take a while.
        edits = await anyio.to_thread.run_sync(text_edits, current.text, after, units)
        edit = lsp.WorkspaceEdit(
            document_changes=[
                lsp.TextDocumentEdit(
                    text_document=lsp.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=current.version.version
                    ),
                    edits=list(edits),
                )
            ]
        )
        timeout = self._config.editor_timeout_seconds
        try:
            response = await self._client.request(
                lsp.WORKSPACE_APPLY_EDIT,
                lsp.ApplyWorkspaceEditParams(edit=edit, label=f"toolhost: {rel}"),
                timeout,
            )
        except TimeoutError:
            raise ToolError(
                TIMEOUT,
                f"the editor did not answer the edit of {rel} within {timeout:g} s",
                "read the file to see whether the edit was applied",
            ) from None
        except UnreadableAnswer as exc:  # applied or not, its buffer will tell
            return await self._wait_for_text(uri, after, rel, exc)
        except ClientRequestError as exc:  # eglot declines with a JSON-RPC error
            raise _refused(rel, str(exc)) from None
        if not _field(response, "applied"):
            reason = _field(response, "failure_reason") or _field(response, "failureReason")
            raise _refused(rel, reason)
        return await self._wait_for_text(uri, after, rel)

    async def _wait_for_text(
        self, uri: str, expected: str, rel: str, unreadable: UnreadableAnswer | None = None
    ) -> BufferVersion:
        """The buffer's version once its reported text is the edited text.

        Editors may answer applyEdit before they send the didChange carrying the edit.
        """
        with anyio.move_on_after(self._config.editor_timeout_seconds):
            while True:
                changed = self._changed
                document = self._documents.text_documents.get(document_key(uri))
                if (
                    document is not None
                    and document.version is not None
                    and same_text(document.source, expected)
                ):
                    return BufferVersion(uri, document.version, text_hash(document.source))
                await changed.wait()
        if unreadable is not None:
            raise _refused(
                rel,
                f"it gave an answer toolhost cannot read (it sent {unreadable.sent}), and its "
                "buffer does not hold the edited text",
            )
        raise ToolError(
            FS_STALE_VERSION,
            f"the editor accepted the edit of {rel} but its buffer does not hold the edited "
            "text (it changed meanwhile, or the editor skipped the edit)",
            REREAD,
        )

    async def _settle_disk(self, uri: str, path: Path, rel: str, was_clean: bool) -> str:
        if not was_clean:
            return (
                f"The edit is in the editor's buffer of {rel}, which also holds unsaved changes "
                "of the user, so it was not saved: the file on disk is behind the buffer "
                "(bash, tests and other programs still see the old file)."
            )
        if not self._client.features.save_document:
            return (
                f"The edit is in the editor's buffer of {rel}; this editor cannot be asked to "
                "save it, so the file on disk is behind the buffer until the user saves."
            )
        saved = False
        try:
            answer = await self._client.request(
                TOOLHOST_SAVE_DOCUMENT,
                SaveDocumentParams(uri=uri),
                self._config.editor_timeout_seconds,
            )
            saved = bool(_field(answer, "saved"))
        except (TimeoutError, ClientRequestError) as exc:
            log.warning("toolhost/saveDocument for %s failed: %r", uri, exc)
        document = self._documents.text_documents.get(document_key(uri))
        if saved and document is not None and await self._matches_disk(path, document.source):
            return f"The editor applied the edit to its buffer of {rel} and saved it."
        return (
            f"The edit is in the editor's buffer of {rel}, but the editor did not save it: "
            "the file on disk is behind the buffer."
        )


def _refused(rel: str, reason: object) -> ToolError:
    said = f": {reason}" if reason else " (it gave no reason)"
    return ToolError(
        EDITOR_REFUSED,
        f"the editor declined the edit of {rel}{said}, so nothing was changed",
        "read the file again and redo the edit if it is still wanted, or ask the user",
    )


def _text_file(path: Path, uri: str, document: TextDocument) -> TextFile:
    text = document.source
    version = BufferVersion(uri, document.version or 0, text_hash(text))
    return TextFile(path, text, "utf-8", b"", version, source="editor")


def _read_disk(workspace: Workspace, path: Path) -> TextFile | None:
    """The file as on disk (blocking), or None when it cannot be read as text. Bytes and
    metadata come from one descriptor opened beneath the root (fs/beneath.py)."""
    rel = workspace.relative(path)
    try:
        st, data = beneath.read_regular(workspace.confining_root(path), path, rel, sys.maxsize)
        if data is None:
            return None
        text, encoding, bom = textio.decode(data)
    except (OSError, ToolError, textio.DecodeError):
        return None
    version = textio.version_from_stat(st, data)
    return TextFile(path, text, encoding, bom, version, mode=st.st_mode)


def _real_path(uri: str) -> Path | None:
    path = uri_to_path(uri)
    if path is None:
        return None
    try:
        return path.resolve()
    except OSError:
        return None


def _field(value: Any, name: str) -> Any:
    if isinstance(value, dict):
        return value.get(name)
    if attrs.has(type(value)) or hasattr(value, name):
        return getattr(value, name, None)
    return None
