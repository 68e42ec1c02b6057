"""An editor for pytest-lsp tests: a real LSP client that keeps open documents the way an
editor does (incremental didChange, versions), applies `workspace/applyEdit` like Neovim
with the toolhost plugin (refusing a TextDocumentEdit for another version), and writes a
buffer to disk on `toolhost/saveDocument`. It stands in for the editor's UI only: every
message goes over the real protocol to a real `toolhost serve`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.workspace import PositionCodec
from pygls.workspace.text_document import TextDocument
from pytest_lsp import LanguageClient

from tests.helpers import make_test_client


class EditorDouble:
    def __init__(self, client: LanguageClient, encoding: str = "utf-16") -> None:
        self.client = client
        self.codec = PositionCodec(encoding)
        self.documents: dict[str, TextDocument] = {}
        self.apply_edits: list[types.ApplyWorkspaceEditParams] = []
        self.saves: list[str] = []
        # Called when an applyEdit arrives, before it is checked: lets a test type into the
        # buffer at the worst moment (after the server's own check, before the editor's).
        self.before_apply: Callable[[], None] | None = None

    @staticmethod
    def uri(path: Path) -> str:
        return path.as_uri()

    def text(self, path: Path) -> str:
        return self.documents[self.uri(path)].source

    def version(self, path: Path) -> int:
        version = self.documents[self.uri(path)].version
        assert version is not None
        return version

    def open(self, path: Path, text: str | None = None) -> None:
        uri = self.uri(path)
        source = path.read_text(encoding="utf-8") if text is None else text
        self.documents[uri] = TextDocument(uri, source, version=1, position_codec=self.codec)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="plaintext", version=1, text=source
                )
            )
        )

    def change(self, path: Path, edits: list[types.TextEdit]) -> None:
        """The user (or an applied edit) changes the buffer: one incremental didChange."""
        document = self.documents[self.uri(path)]
        changes = [
            types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
            for e in sorted(
                edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
            )
        ]
        for change in changes:
            document.apply_change(change)
        document.version = (document.version or 0) + 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=document.uri, version=document.version
                ),
                content_changes=list(changes),
            )
        )

    def type_line(self, path: Path, line: int, text: str) -> None:
        """Insert a whole line before `line`, as a user typing would."""
        position = types.Position(line=line, character=0)
        self.change(path, [types.TextEdit(types.Range(position, position), text + "\n")])

    def close(self, path: Path) -> None:
        uri = self.uri(path)
        del self.documents[uri]
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )

    # -- requests from the server -------------------------------------------------

    def on_apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        self.apply_edits.append(params)
        if self.before_apply is not None:
            self.before_apply()
        for change in params.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            document = self.documents.get(change.text_document.uri)
            if document is None:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="not open")
            if change.text_document.version != document.version:
                return types.ApplyWorkspaceEditResult(
                    applied=False,
                    failure_reason=f"buffer at version {document.version}, "
                    f"edit for {change.text_document.version}",
                )
        for change in params.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            path = Path(change.text_document.uri.removeprefix("file://"))
            self.change(path, [e for e in change.edits if isinstance(e, types.TextEdit)])
        return types.ApplyWorkspaceEditResult(applied=True)

    def on_save_document(self, params: Any) -> dict[str, bool]:
        uri = params["uri"] if isinstance(params, dict) else params.uri
        self.saves.append(uri)
        document = self.documents[uri]
        Path(uri.removeprefix("file://")).write_text(document.source, encoding="utf-8")
        return {"saved": True}


def editor_client_factory(holder: list[EditorDouble]) -> Callable[[], LanguageClient]:
    """A client factory for lsp_session whose client behaves as an EditorDouble."""

    def factory() -> LanguageClient:
        client = make_test_client()
        editor = EditorDouble(client)
        holder.append(editor)

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def _apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            return editor.on_apply_edit(params)

        @client.feature("toolhost/saveDocument")
        def _save(params: Any) -> dict[str, bool]:
            return editor.on_save_document(params)

        return client

    return factory


EDITOR_CAPABILITIES = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(apply_edit=True),
    general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
)
