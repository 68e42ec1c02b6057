"""Messages of the calls a client makes: tools, call, result pages, status, preview, and the
didCall record the server sends after each call."""

from __future__ import annotations

from typing import Any, Literal

import attrs

from lsp_server.protocol.config_messages import ManagedConfigInfo, WorkspaceConfigInfo

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
    policy_sources: dict[str, str]
    """Which layer set each policy value: "policy.mode" -> e.g. "user file ~/.config/toolhost/
    config.toml", "managed file /etc/toolhost/managed.toml (locked)" or "default"."""
    config_problems: list[str]
    lsp_answers: JSON = None
    """Who answers lsp_* questions: `provider` (lsp.provider), `editorAnswers` (the client
    declared lspProxy) and, per language, who answered last (`editor` or `toolhost`)."""
    mcp_sessions: list[JSON] = attrs.Factory(list)
    """MCP clients attached to this runtime (`toolhost mcp`), one session each."""
    leftover_temps: JSON = None
    """The start-up sweep of temp files left by killed writes: `done`, `removed`,
    `freedBytes`, `folders` (walked so far)."""
    checkpoints: JSON = None
    """Shell checkpoints per root (`shellCheckpoints`: on, or off and why: over the size
    budget; `files`, `megabytes` measured; `watches` and `folderMarks` held, `notWatched`
    and why, `watchedBy`: inotify, or fanotify and why;
    `lastSnapshot`: how the last one was taken), `inotifyWatches` (held, limit, share),
    `folderMarks` (held, limit, share) and
    `attribution`: how a command's own changes are told from others' (exact where the
    kernel names each writer, else by origin, and why)."""
    config_layers: list[str] = attrs.Factory(list)
    """The configuration layers that were read, highest precedence first."""
    workspace_config: list[WorkspaceConfigInfo] = attrs.Factory(list)
    """Each root's `.toolhost.toml`: its sha256 and whether the user approved that content
    (only then do its loosening entries apply)."""
    managed_config: ManagedConfigInfo | None = None
    """The administrator's managed file, when there is one (or it is invalid)."""


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
    approved_by: str | None = None
    """The MCP client whose own permission step approved the call (`client_approved`)."""
    agent: str | None = None
    """The session's agent, as its face named it (MCP clientInfo, ACP, the editor): the
    editors' activity views group calls by it."""
