"""The EditorBridge: the editor as the runtime reaches it over LSP — requests (approvals,
saveDocument, applyEdit), notifications, messages — its open buffers, and what it declared
it can do."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.workspace import TextDocument

from lsp_server.core.client import ClientFeatures, ClientRequestError, UnreadableAnswer
from lsp_server.protocol import ToolhostClientCapabilities, camel

if TYPE_CHECKING:
    from lsp_server.server.server import ToolhostServer

_MESSAGE_TYPES = {
    "error": types.MessageType.Error,
    "warning": types.MessageType.Warning,
    "info": types.MessageType.Info,
}


class EditorBridge:
    """The runtime's ClientBridge for an editor connected to `server`."""

    def __init__(self, server: ToolhostServer) -> None:
        self._server = server

    @property
    def features(self) -> ClientFeatures:
        return self._server.features

    def notify(self, method: str, params: Any) -> None:
        self._server.protocol.notify(method, params)

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        future = self._server.protocol.send_request_async(method, params)
        try:
            return await asyncio.wait_for(future, timeout)
        except JsonRpcException as exc:  # eglot declines an edit so
            if isinstance(exc.data, UnreadableAnswer):  # see ToolhostProtocol.structure_message
                raise exc.data from None
            raise ClientRequestError(exc.message or type(exc).__name__) from exc

    def show_message(self, text: str, level: str = "warning") -> None:
        kind = _MESSAGE_TYPES.get(level, types.MessageType.Warning)
        self._server.window_show_message(types.ShowMessageParams(type=kind, message=text))

    @property
    def text_documents(self) -> dict[str, TextDocument]:
        """pygls' open documents, looked up on use: its workspace exists only once pygls
        has handled initialize, after the runtime is built."""
        try:
            documents: dict[str, TextDocument] = self._server.workspace.text_documents
        except RuntimeError:
            return {}
        return documents


def client_features(capabilities: types.ClientCapabilities) -> ClientFeatures:
    """What the client declared: capabilities.experimental.toolhost and LSP basics."""
    experimental = capabilities.experimental if isinstance(capabilities.experimental, dict) else {}
    declared = experimental.get("toolhost") or {}
    if not isinstance(declared, dict):
        declared = {}
    # Each key of the one capability type, read leniently (a Lua client may send 1 or []).
    toolhost = ToolhostClientCapabilities(
        **{
            field.name: bool(declared.get(camel(field.name)))
            for field in attrs.fields(ToolhostClientCapabilities)
        }
    )
    workspace = capabilities.workspace
    window = capabilities.window
    watched = workspace.did_change_watched_files if workspace else None
    return ClientFeatures(
        approvals=toolhost.approvals,
        save_document=toolhost.save_document,
        lsp_proxy=toolhost.lsp_proxy,
        pre_approved=toolhost.pre_approved,
        secrets=toolhost.secrets,
        apply_edit=bool(workspace and workspace.apply_edit),
        work_done_progress=bool(window and window.work_done_progress),
        watched_files_dynamic=bool(watched and watched.dynamic_registration),
    )
