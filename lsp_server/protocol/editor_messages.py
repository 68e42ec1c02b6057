"""Messages the server sends the editor: approvals, saving a document, the agent's lsp_*
questions, job updates, presented files, a password a command asks for; and the client
capabilities that enable them."""

from __future__ import annotations

from typing import Any, Literal

import attrs

JSON = Any


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
class SecretParams:
    """A command the user allowed asks for a password (ssh, sudo, git): the editor asks the
    user with a hidden input. The answer goes to the program only, never to the model."""

    prompt: str
    """What the program asks, as it asked it ("Enter passphrase for key 'x':")."""
    kind: Literal["ssh", "sudo", "git", "credential", "terminal", "askpass"]
    """Who asks: an askpass program (ssh, sudo, git), git's credential helper (a user name
    and a password for a host: ask the user name too when `username` is null), a password
    prompt of a terminal job."""
    session: str
    call_id: str
    command: str
    """The command line the user allowed, to show beside the prompt."""
    username: str | None = None
    """kind credential: the user name git knows already (from the URL)."""


@attrs.define(repr=False)
class SecretResult:
    secret: str | None = None
    """What the user typed; absent when cancelled."""
    username: str | None = None
    """kind credential: the user name the user typed."""
    cancelled: bool = False

    def __repr__(self) -> str:  # never the secret, in a log line or a traceback
        return f"SecretResult(cancelled={self.cancelled!r})"


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
    secrets: bool = False
    """It answers toolhost/secret (asks the user for a password with a hidden input)."""
