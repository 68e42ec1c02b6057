"""The one fake editor of the LSP tests: a real pytest-lsp client that stands in for the
editor's UI only, every message going over the real protocol to a real `toolhost serve`.

It does what an editor with the toolhost plugin does, each part answering only what the
server sends (the server asks only for what the client declared, so one editor serves
every test):
- buffers: keeps open documents the way an editor does (incremental didChange, versions),
  applies `workspace/applyEdit` like Neovim (refusing a TextDocumentEdit for another
  version) and writes a buffer to disk on `toolhost/saveDocument`;
- the user: answers every `toolhost/approve` through `script`, answers
  `workspace/configuration` with `settings`, records `window/showMessage` (the errors
  apart) and `toolhost/configUntrusted`;
- the editor's language client: answers `toolhost/lspRequest` through `lsp_answer`.

Use: `editor = FakeEditor()`, then `lsp_session(..., client_factory=editor.factory)`;
`editor.client` is the session's client once it started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.workspace import PositionCodec
from pygls.workspace.text_document import TextDocument
from pytest_lsp import LanguageClient

from tests.helpers import make_test_client

Answer = dict[str, Any]
Script = Callable[[dict[str, Any]], Awaitable[Answer]]
LspAnswer = Callable[[dict[str, Any]], Awaitable[Any]]
ApplyAnswer = Callable[[types.ApplyWorkspaceEditParams], Any]

APPROVALS = {"approvals": True}
"""The experimental capability of an editor that asks its user (toolhost/approve)."""

EDITOR_CAPABILITIES = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(apply_edit=True),
    general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
)
"""The capabilities of an editor that applies edits to its buffers, in UTF-16."""


async def _no_lsp_answer(params: dict[str, Any]) -> Any:
    return {"handled": False}


class FakeEditor:
    def __init__(self, *, encoding: str = "utf-16", lsp_answer: LspAnswer | None = None) -> None:
        self._client: LanguageClient | None = None
        # buffers
        self.codec = PositionCodec(encoding)
        self.documents: dict[str, TextDocument] = {}
        self.apply_edits: list[types.ApplyWorkspaceEditParams] = []
        """Every workspace/applyEdit received, answered or not."""
        self.answer_apply_edit: ApplyAnswer = self.apply_to_buffers
        """How applyEdit is answered (a test may decline, fail or answer nonsense)."""
        self.saves: list[str] = []
        self.before_apply: Callable[[], None] | None = None
        """Called when an applyEdit arrives, before it is checked: lets a test type into the
        buffer at the worst moment (after the server's own check, before the editor's)."""
        # the user
        self.prompts: list[dict[str, Any]] = []
        self.prompted = asyncio.Condition()
        self.script: Script = self.answer({"decision": "allow_once"})
        self.settings: dict[str, Any] | None = None
        """What workspace/configuration answers for the section `toolhost`."""
        self.messages: list[str] = []
        """window/showMessage texts."""
        self.errors: list[str] = []
        """window/showMessage texts of type Error; `error_shown` is set at the first."""
        self.error_shown = asyncio.Event()
        self.untrusted_configs: list[dict[str, Any]] = []
        """toolhost/configUntrusted notifications."""
        self.config_noticed = asyncio.Event()
        # the editor's language client
        self.lsp_answer: LspAnswer = lsp_answer or _no_lsp_answer
        self.lsp_requests: list[dict[str, Any]] = []
        """Every toolhost/lspRequest received."""

    @property
    def client(self) -> LanguageClient:
        assert self._client is not None, "the session has not started this editor's client"
        return self._client

    def factory(self) -> LanguageClient:
        """The client factory for lsp_session: a test client answering as this editor."""
        client = make_test_client()
        self._client = client

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: types.ApplyWorkspaceEditParams) -> Any:
            self.apply_edits.append(params)
            return self.answer_apply_edit(params)

        @client.feature("toolhost/saveDocument")
        def save_document(params: Any) -> dict[str, bool]:
            return self.save(params)

        @client.feature("toolhost/approve")
        async def approve(params: dict[str, Any]) -> Answer:
            async with self.prompted:
                self.prompts.append(params)
                self.prompted.notify_all()
            return await self.script(params)

        @client.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return [self.settings for _ in params.items]

        @client.feature("toolhost/configUntrusted")
        def config_untrusted(params: Any) -> None:
            self.untrusted_configs.append(params)
            self.config_noticed.set()

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            self.messages.append(params.message)
            if params.type == types.MessageType.Error:
                self.errors.append(params.message)
                self.error_shown.set()

        @client.feature("toolhost/lspRequest")
        async def lsp_request(params: dict[str, Any]) -> Any:
            self.lsp_requests.append(params)
            return await self.lsp_answer(params)

        return client

    # -- the user ---------------------------------------------------------------------

    @staticmethod
    def answer(result: Answer) -> Script:
        """A script that answers every approval prompt with `result`."""

        async def respond(params: dict[str, Any]) -> Answer:
            return result

        return respond

    async def wait_for_prompts(self, count: int) -> None:
        async with self.prompted:
            await self.prompted.wait_for(lambda: len(self.prompts) >= count)

    # -- buffers ------------------------------------------------------------------------

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

    def apply_to_buffers(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        """The editor's own answer to applyEdit: all of it to open buffers, or nothing."""
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

    def save(self, params: Any) -> dict[str, bool]:
        uri = params["uri"] if isinstance(params, dict) else params.uri
        self.saves.append(uri)
        document = self.documents[uri]
        Path(uri.removeprefix("file://")).write_text(document.source, encoding="utf-8")
        return {"saved": True}
