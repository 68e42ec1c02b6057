"""The custom toolhost/* messages, typed once, and the table method -> (params, result).

Field names are snake_case in Python and camelCase on the wire. `arguments` and other
free-form JSON stay plain JSON: keys such as `$schema`, `from` or `_x` arrive intact.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.strategies import configure_union_passthrough

PROTOCOL_VERSION = 1

JSON = Any


@attrs.define
class ToolsParams:
    surface: Literal["core", "full", "minimal"] = "core"
    session: str | None = None


@attrs.define
class ToolInfo:
    name: str
    read_only: bool
    description: str
    input_schema: JSON


@attrs.define
class ToolsResult:
    surface: str
    surface_hash: str
    tools: list[ToolInfo]


@attrs.define
class CallParams:
    name: str
    arguments: JSON = None
    session: str = "default"
    call_id: str | None = None
    batch: str | None = None
    work_done_token: str | int | None = None
    surface: Literal["core", "full", "minimal"] | None = None
    # Set by a client that already asked the user itself (VS Code's LM tool confirmation).
    pre_approved: bool = False


@attrs.define
class ErrorInfo:
    code: str
    message: str
    recovery: str
    signature: str | None = None
    violations: list[dict[str, str]] | None = None
    details: JSON = None


@attrs.define
class CallMeta:
    tool: str
    read_only: bool
    duration_ms: float
    truncated: bool
    shown_chars: int
    total_chars: int
    result_ref: str | None
    approval: JSON
    paths: list[str]


@attrs.define
class CallResult:
    call_id: str
    is_error: bool
    content: list[JSON]
    meta: CallMeta
    error: ErrorInfo | None = None


@attrs.define
class ResultParams:
    result_ref: str
    offset: int = 0
    limit: int = 16384
    session: str | None = None
    """Not needed: a resultRef is unique per server."""


@attrs.define
class ResultPage:
    result_ref: str
    offset: int
    next_offset: int | None
    total_bytes: int
    sha256: str
    complete: bool
    text: str


@attrs.define
class StatusParams:
    session: str | None = None


@attrs.define
class StatusResult:
    version: str
    roots: list[str]
    sessions: list[JSON]
    jobs: list[JSON]
    language_servers: list[JSON]
    index: JSON
    policy_sources: list[str]
    config_problems: list[str]
    lsp_answers: JSON = None
    """Who answers lsp_* questions: `provider` (lsp.provider), `editorAnswers` (the client
    declared lspProxy) and, per language, who answered last (`editor` or `toolhost`)."""
    mcp_sessions: list[JSON] = attrs.Factory(list)
    """MCP clients attached to this runtime (`toolhost mcp`), one session each."""
    leftover_temps: JSON = None
    """The start-up sweep of temp files left by killed writes: `done`, `removed`,
    `freedBytes`, `folders` (walked so far)."""


@attrs.define
class ApproveParams:
    call_id: str
    session: str
    tool: str
    read_only: bool
    title: str
    summary: str
    arguments: JSON
    paths: list[str]
    diff: str | None
    risk: Literal["low", "medium", "high"]
    suggested_rules: list[str]
    cwd: str | None = None
    """bash: the folder the command runs in."""
    background: bool | None = None
    """bash: started as a background job (it keeps running after the call returns)."""
    timeout_ms: int | None = None
    """bash: stopped after this many milliseconds (None for a background job)."""
    sandbox: str | None = None
    """bash: workspace-write | read-only | none."""
    client: str | None = None
    """The agent chat or MCP client that made the call (initialize's clientInfo.name)."""


@attrs.define
class ApproveResult:
    decision: Literal["allow_once", "allow_session", "allow_always", "deny"]
    rule: str | None = None
    reason: str | None = None
    dismissed: bool = False
    """With deny: the user closed the prompt without choosing (Escape), said nothing."""


@attrs.define
class PreviewParams:
    name: str
    arguments: JSON = None
    session: str = "default"
    surface: Literal["core", "full", "minimal"] | None = None


@attrs.define
class PreviewResult:
    """What `toolhost/call` with the same params would ask: a dry run that writes nothing."""

    would_ask: bool
    title: str
    summary: str
    paths: list[str]
    risk: Literal["low", "medium", "high"]
    diff: str | None = None
    cwd: str | None = None
    background: bool | None = None
    timeout_ms: int | None = None
    sandbox: str | None = None
    error: ErrorInfo | None = None
    """Set when the call would be refused (validation, confinement, observation, policy)."""


@attrs.define
class SaveDocumentParams:
    uri: str


@attrs.define
class SaveDocumentResult:
    saved: bool


@attrs.define
class LspRequestParams:
    """A standard LSP request (`textDocument/definition`, `.../references`, `.../hover`,
    `.../diagnostic`) with its standard params, for the editor's own language servers.
    Positions are in UTF-16 code units, as LSP counts by default."""

    method: str
    params: JSON


@attrs.define
class LspRequestResult:
    handled: bool
    """false: the editor has no language server for that document (toolhost asks its own)."""
    result: JSON = None
    server: str | None = None
    """The editor's server that answered (e.g. "pyright"), for the answer's provenance line."""


@attrs.define
class DidCallParams:
    """Every finished call, as the editor (toolhost/didCall), the audit log and the index
    refresh learn about it: one record, sent as it is."""

    call_id: str
    session: str
    tool: str
    decision: str | None
    rule: str | None
    is_error: bool
    code: str | None
    duration_ms: float
    paths: list[str]
    read_only: bool = True
    arguments_digest: str = ""
    """sha256 of the validated arguments (16 hex): correlates calls without copying file
    contents or secrets anywhere."""
    written: list[str] = attrs.Factory(list)
    """Files the call wrote (created, changed, or a move's destination)."""


@attrs.define
class JobUpdateParams:
    job_id: str
    session: str
    status: str
    exit_code: int | None = None
    new_bytes: int = 0


@attrs.define
class PresentedFileInfo:
    path: str
    """Workspace-relative display path."""
    uri: str
    description: str | None = None


@attrs.define
class PresentParams:
    """The agent declared deliverables (the `present` tool); the editor may show them."""

    session: str
    files: list[PresentedFileInfo]


@attrs.define
class ToolhostClientCapabilities:
    """What a client declares in `capabilities.experimental.toolhost` (initialize)."""

    approvals: bool = False
    """It answers toolhost/approve (shows the user a prompt)."""
    save_document: bool = False
    """It answers toolhost/saveDocument."""
    lsp_proxy: bool = False
    """It answers language requests with its own language servers."""
    pre_approved: bool = False
    """It confirms some calls itself and marks them `preApproved`."""


@attrs.define
class CheckpointsParams:
    session: str | None = None
    """Only this session's calls (default: every session's)."""
    limit: int = 50


@attrs.define
class CheckpointFile:
    path: str
    change: Literal["modified", "created", "deleted", "moved"]
    from_path: str | None = None
    """The old path of a moved file."""
    not_stored: bool = False
    """Over the checkpoint size limit: recorded by size and hash, a revert cannot restore it."""


@attrs.define
class CheckpointInfo:
    call_id: str
    session: str
    tool: str
    time: float
    """When the call started, in seconds since the epoch."""
    files: list[CheckpointFile]
    label: str = ""
    """The command (bash), or the call that a revert undid."""
    reverts: str | None = None


@attrs.define
class CheckpointsResult:
    checkpoints: list[CheckpointInfo]


@attrs.define
class RevertParams:
    call_id: str
    session: str = "default"


@attrs.define
class RevertConflict:
    path: str
    reason: str
    diff: str
    """What changed at the path since the call (unified diff, from the call's result)."""


@attrs.define
class RevertResult:
    reverted: list[str]
    conflicts: list[RevertConflict]
    checkpoint: str | None = None
    """The call id the revert was recorded under: revert it to undo the revert."""
    text: str = ""
    """A summary for people."""


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


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_SCALARS: dict[Any, str] = {str: "a string", int: "an integer", bool: "a boolean"}


def _accepts(kind: Any, value: Any) -> bool:
    if kind is type(None):
        return value is None
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is str and isinstance(value, str):
        # A lone surrogate (JSON allows "\ud800") is no text: it cannot be logged or stored.
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "ignore") == value
    return isinstance(value, kind)


def _strict_scalar_hook(field_type: Any) -> Any | None:
    """A structure hook for a field of scalars (str, int, bool, None, literals) that refuses
    other JSON instead of coercing it (cattrs turns 7 into "7" and [] into "[]"): a
    malformed envelope must get a JSON-RPC error, not a call under a made-up session."""
    members = typing.get_args(field_type) if typing.get_origin(field_type) in _UNIONS else ()
    kinds = members or (field_type,)
    literals: list[Any] = []
    plain: list[Any] = []
    for kind in kinds:
        if typing.get_origin(kind) is Literal:
            literals.extend(typing.get_args(kind))
        elif kind in _SCALARS or kind is type(None):
            plain.append(kind)
        else:
            return None

    def structure(value: Any, _: Any) -> Any:
        if (isinstance(value, str) and value in literals) or any(_accepts(k, value) for k in plain):
            return value
        wanted = [repr(v) for v in literals] + [_SCALARS.get(k, "null") for k in plain]
        raise ValueError(f"expected {' or '.join(wanted)}, got {type(value).__name__}")

    return structure


_UNIONS = (typing.Union, types.UnionType)


def register_message_hooks(converter: cattrs.Converter) -> cattrs.Converter:
    """camelCase keys on the wire for every toolhost message type; scalar fields strict."""
    for cls in MESSAGE_TYPES:
        renames = {}
        for f in attrs.fields(attrs.resolve_types(cls)):
            hook = _strict_scalar_hook(f.type)
            renames[f.name] = (
                override(rename=camel(f.name), struct_hook=hook)
                if hook
                else override(rename=camel(f.name))
            )
        converter.register_structure_hook(
            cls,
            make_dict_structure_fn(cls, converter, **renames),  # type: ignore[arg-type]
        )
        converter.register_unstructure_hook(
            cls,
            make_dict_unstructure_fn(cls, converter, **renames),  # type: ignore[arg-type]
        )
    return converter


def message_converter() -> cattrs.Converter:
    converter = cattrs.Converter()
    # Plain cattrs has no hook for unions of primitives (work_done_token: str | int | None).
    configure_union_passthrough(str | int | float | bool | None, converter)
    return register_message_hooks(converter)
