"""The custom toolhost/* messages, typed once, and the table method -> (params, result).

Field names are snake_case in Python and camelCase on the wire. `arguments` and other
free-form JSON stay plain JSON: keys such as `$schema`, `from` or `_x` arrive intact.

- call_messages.py: what a client asks (tools, call, result, status, preview) and didCall;
- editor_messages.py: what the server asks or tells the editor (approve, saveDocument,
  lspRequest, jobUpdate, present) and the client capabilities;
- checkpoint_messages.py: checkpoints and revert;
- config_messages.py: a workspace config waiting for the user's approval (configUntrusted,
  trustConfig) and the managed file's state;
- methods.py: the method table, method-name constants, every message type;
- converter.py: the cattrs converter (camelCase on the wire, strict scalars);
- wire_types.py: types and values in JSON's words, for the errors a client author reads.

Everything is importable from here (`from lsp_server.protocol import CallParams`).
"""

from __future__ import annotations

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
from lsp_server.protocol.converter import message_converter, register_message_hooks
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
from lsp_server.protocol.methods import (
    EXECUTE_COMMAND_CALL,
    MESSAGE_TYPES,
    METHOD_TABLE,
    METHODS,
    PROTOCOL_VERSION,
    TOOLHOST_APPROVE,
    TOOLHOST_CALL,
    TOOLHOST_CHECKPOINTS,
    TOOLHOST_CONFIG_UNTRUSTED,
    TOOLHOST_DID_CALL,
    TOOLHOST_JOB_UPDATE,
    TOOLHOST_LSP_REQUEST,
    TOOLHOST_PRESENT,
    TOOLHOST_PREVIEW,
    TOOLHOST_RESULT,
    TOOLHOST_REVERT,
    TOOLHOST_REVERT_SESSION,
    TOOLHOST_SAVE_DOCUMENT,
    TOOLHOST_SESSION_CHANGES,
    TOOLHOST_STATUS,
    TOOLHOST_TOOLS,
    TOOLHOST_TRUST_CONFIG,
    Direction,
    MethodSpec,
)
from lsp_server.protocol.wire_types import camel

__all__ = [
    "EXECUTE_COMMAND_CALL",
    "MESSAGE_TYPES",
    "METHODS",
    "METHOD_TABLE",
    "PROTOCOL_VERSION",
    "TOOLHOST_APPROVE",
    "TOOLHOST_CALL",
    "TOOLHOST_CHECKPOINTS",
    "TOOLHOST_CONFIG_UNTRUSTED",
    "TOOLHOST_DID_CALL",
    "TOOLHOST_JOB_UPDATE",
    "TOOLHOST_LSP_REQUEST",
    "TOOLHOST_PRESENT",
    "TOOLHOST_PREVIEW",
    "TOOLHOST_RESULT",
    "TOOLHOST_REVERT",
    "TOOLHOST_REVERT_SESSION",
    "TOOLHOST_SAVE_DOCUMENT",
    "TOOLHOST_SESSION_CHANGES",
    "TOOLHOST_STATUS",
    "TOOLHOST_TOOLS",
    "TOOLHOST_TRUST_CONFIG",
    "ApproveParams",
    "ApproveResult",
    "CallMeta",
    "CallParams",
    "CallResult",
    "CheckpointFile",
    "CheckpointInfo",
    "CheckpointsParams",
    "CheckpointsResult",
    "ConfigUntrustedParams",
    "DidCallParams",
    "Direction",
    "ErrorInfo",
    "JobUpdateParams",
    "LspRequestParams",
    "LspRequestResult",
    "ManagedConfigInfo",
    "MethodSpec",
    "PresentParams",
    "PresentedFileInfo",
    "PreviewParams",
    "PreviewResult",
    "ResultPage",
    "ResultParams",
    "RevertConflict",
    "RevertParams",
    "RevertResult",
    "RevertSessionParams",
    "RevertSessionResult",
    "SaveDocumentParams",
    "SaveDocumentResult",
    "SessionChangesParams",
    "SessionChangesResult",
    "StatusParams",
    "StatusResult",
    "ToolInfo",
    "ToolhostClientCapabilities",
    "ToolsParams",
    "ToolsResult",
    "TrustConfigParams",
    "TrustConfigResult",
    "WorkspaceConfigInfo",
    "camel",
    "message_converter",
    "register_message_hooks",
]
