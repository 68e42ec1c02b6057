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
    RevertSessionParams,
    RevertSessionResult,
    SessionChangesParams,
    SessionChangesResult,
)
from lsp_server.protocol.config_messages import (
    ConfigUntrustedParams,
    ManagedConfigInfo,
    TrustConfigParams,
    TrustConfigResult,
    WorkspaceConfigInfo,
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
    SecretParams,
    SecretResult,
    ToolhostClientCapabilities,
)
from lsp_server.wire import method_names

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


# Method names, as lsprotocol spells its own (types.TEXT_DOCUMENT_DID_OPEN ...): from
# lsp_server/wire/method_names.py, a module that imports nothing, so that the server registers
# its handlers under them before it loads any message type.
TOOLHOST_APPROVE = method_names.TOOLHOST_APPROVE
TOOLHOST_CALL = method_names.TOOLHOST_CALL
TOOLHOST_CHECKPOINTS = method_names.TOOLHOST_CHECKPOINTS
TOOLHOST_CONFIG_UNTRUSTED = method_names.TOOLHOST_CONFIG_UNTRUSTED
TOOLHOST_DID_CALL = method_names.TOOLHOST_DID_CALL
TOOLHOST_JOB_UPDATE = method_names.TOOLHOST_JOB_UPDATE
TOOLHOST_LSP_REQUEST = method_names.TOOLHOST_LSP_REQUEST
TOOLHOST_PRESENT = method_names.TOOLHOST_PRESENT
TOOLHOST_PREVIEW = method_names.TOOLHOST_PREVIEW
TOOLHOST_RESULT = method_names.TOOLHOST_RESULT
TOOLHOST_REVERT = method_names.TOOLHOST_REVERT
TOOLHOST_REVERT_SESSION = method_names.TOOLHOST_REVERT_SESSION
TOOLHOST_SESSION_CHANGES = method_names.TOOLHOST_SESSION_CHANGES
TOOLHOST_SAVE_DOCUMENT = method_names.TOOLHOST_SAVE_DOCUMENT
TOOLHOST_SECRET = method_names.TOOLHOST_SECRET
TOOLHOST_STATUS = method_names.TOOLHOST_STATUS
TOOLHOST_TOOLS = method_names.TOOLHOST_TOOLS
TOOLHOST_TRUST_CONFIG = method_names.TOOLHOST_TRUST_CONFIG

METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(TOOLHOST_TOOLS, ToolsParams, ToolsResult, "client->server"),
    MethodSpec(TOOLHOST_CALL, CallParams, CallResult, "client->server"),
    MethodSpec(TOOLHOST_RESULT, ResultParams, ResultPage, "client->server"),
    MethodSpec(TOOLHOST_STATUS, StatusParams, StatusResult, "client->server"),
    MethodSpec(TOOLHOST_CHECKPOINTS, CheckpointsParams, CheckpointsResult, "client->server"),
    MethodSpec(TOOLHOST_REVERT, RevertParams, RevertResult, "client->server"),
    MethodSpec(
        TOOLHOST_SESSION_CHANGES, SessionChangesParams, SessionChangesResult, "client->server"
    ),
    MethodSpec(TOOLHOST_REVERT_SESSION, RevertSessionParams, RevertSessionResult, "client->server"),
    MethodSpec(TOOLHOST_PREVIEW, PreviewParams, PreviewResult, "client->server"),
    MethodSpec(TOOLHOST_APPROVE, ApproveParams, ApproveResult, "server->client"),
    MethodSpec(TOOLHOST_SAVE_DOCUMENT, SaveDocumentParams, SaveDocumentResult, "server->client"),
    MethodSpec(TOOLHOST_LSP_REQUEST, LspRequestParams, LspRequestResult, "server->client"),
    MethodSpec(TOOLHOST_SECRET, SecretParams, SecretResult, "server->client"),
    MethodSpec(TOOLHOST_DID_CALL, DidCallParams, None, "server->client"),
    MethodSpec(TOOLHOST_JOB_UPDATE, JobUpdateParams, None, "server->client"),
    MethodSpec(TOOLHOST_PRESENT, PresentParams, None, "server->client"),
    MethodSpec(TOOLHOST_TRUST_CONFIG, TrustConfigParams, TrustConfigResult, "client->server"),
    MethodSpec(TOOLHOST_CONFIG_UNTRUSTED, ConfigUntrustedParams, None, "server->client"),
)
METHOD_TABLE = {spec.method: spec for spec in METHODS}
EXECUTE_COMMAND_CALL = method_names.EXECUTE_COMMAND_CALL

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
    SecretParams,
    SecretResult,
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
    SessionChangesParams,
    SessionChangesResult,
    RevertSessionParams,
    RevertSessionResult,
    WorkspaceConfigInfo,
    ManagedConfigInfo,
    ConfigUntrustedParams,
    TrustConfigParams,
    TrustConfigResult,
)
