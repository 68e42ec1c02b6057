"""The table method -> (params, result, direction), the method-name constants, and every
message type (generated to TypeScript and Lua)."""

from __future__ import annotations

from typing import Any, Literal

import attrs

from lsp_server.protocol.call_messages import (
    CallMeta,
    CallParams,
    CallResult,
    DidCallParams,
    ErrorInfo,
    PreviewParams,
    PreviewResult,
    ResultPage,
    ResultParams,
    StatusParams,
    StatusResult,
    ToolInfo,
    ToolsParams,
    ToolsResult,
)
from lsp_server.protocol.checkpoint_messages import (
    CheckpointFile,
    CheckpointInfo,
    CheckpointsParams,
    CheckpointsResult,
    RevertConflict,
    RevertParams,
    RevertResult,
)
from lsp_server.protocol.editor_messages import (
    ApproveParams,
    ApproveResult,
    JobUpdateParams,
    LspRequestParams,
    LspRequestResult,
    PresentedFileInfo,
    PresentParams,
    SaveDocumentParams,
    SaveDocumentResult,
    ToolhostClientCapabilities,
)

PROTOCOL_VERSION = 1
"""The version of the toolhost/* protocol (sent in serverInfo and the generated types)."""

Direction = Literal["client->server", "server->client"]


@attrs.frozen
class MethodSpec:
    method: str
    params: type[Any]
    result: type[Any] | None  # None: a notification
    direction: Direction

    @property
    def constant(self) -> str:
        """The name of its constant here, in TypeScript and in Lua: TOOLHOST_SAVE_DOCUMENT."""
        name = self.method.removeprefix("toolhost/")
        return "TOOLHOST_" + "".join(f"_{c}" if c.isupper() else c for c in name).upper()


# Method names, as lsprotocol spells its own (types.TEXT_DOCUMENT_DID_OPEN ...).
TOOLHOST_TOOLS = "toolhost/tools"
TOOLHOST_CALL = "toolhost/call"
TOOLHOST_RESULT = "toolhost/result"
TOOLHOST_STATUS = "toolhost/status"
TOOLHOST_CHECKPOINTS = "toolhost/checkpoints"
TOOLHOST_REVERT = "toolhost/revert"
TOOLHOST_PREVIEW = "toolhost/preview"
TOOLHOST_APPROVE = "toolhost/approve"
TOOLHOST_SAVE_DOCUMENT = "toolhost/saveDocument"
TOOLHOST_LSP_REQUEST = "toolhost/lspRequest"
TOOLHOST_DID_CALL = "toolhost/didCall"
TOOLHOST_JOB_UPDATE = "toolhost/jobUpdate"
TOOLHOST_PRESENT = "toolhost/present"

METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(TOOLHOST_TOOLS, ToolsParams, ToolsResult, "client->server"),
    MethodSpec(TOOLHOST_CALL, CallParams, CallResult, "client->server"),
    MethodSpec(TOOLHOST_RESULT, ResultParams, ResultPage, "client->server"),
    MethodSpec(TOOLHOST_STATUS, StatusParams, StatusResult, "client->server"),
    MethodSpec(TOOLHOST_CHECKPOINTS, CheckpointsParams, CheckpointsResult, "client->server"),
    MethodSpec(TOOLHOST_REVERT, RevertParams, RevertResult, "client->server"),
    MethodSpec(TOOLHOST_PREVIEW, PreviewParams, PreviewResult, "client->server"),
    MethodSpec(TOOLHOST_APPROVE, ApproveParams, ApproveResult, "server->client"),
    MethodSpec(TOOLHOST_SAVE_DOCUMENT, SaveDocumentParams, SaveDocumentResult, "server->client"),
    MethodSpec(TOOLHOST_LSP_REQUEST, LspRequestParams, LspRequestResult, "server->client"),
    MethodSpec(TOOLHOST_DID_CALL, DidCallParams, None, "server->client"),
    MethodSpec(TOOLHOST_JOB_UPDATE, JobUpdateParams, None, "server->client"),
    MethodSpec(TOOLHOST_PRESENT, PresentParams, None, "server->client"),
)
METHOD_TABLE = {spec.method: spec for spec in METHODS}
EXECUTE_COMMAND_CALL = "toolhost.call"

MESSAGE_TYPES: tuple[type[Any], ...] = (
    ToolsParams,
    ToolInfo,
    ToolsResult,
    CallParams,
    ErrorInfo,
    CallMeta,
    CallResult,
    ResultParams,
    ResultPage,
    StatusParams,
    StatusResult,
    ApproveParams,
    ApproveResult,
    PreviewParams,
    PreviewResult,
    SaveDocumentParams,
    SaveDocumentResult,
    LspRequestParams,
    LspRequestResult,
    DidCallParams,
    JobUpdateParams,
    PresentedFileInfo,
    PresentParams,
    ToolhostClientCapabilities,
    CheckpointsParams,
    CheckpointFile,
    CheckpointInfo,
    CheckpointsResult,
    RevertParams,
    RevertConflict,
    RevertResult,
)
