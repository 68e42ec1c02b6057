"""The editor as the runtime sees it: what it can do, and how to reach it."""

from __future__ import annotations

import json
from typing import Any, Protocol

import attrs

# How much of an unreadable answer a message shows (the model's text and the log line).
SENT_PREVIEW_CHARS = 200


@attrs.define
class ClientFeatures:
    """What the client declared in capabilities.experimental.toolhost (and LSP basics)."""

    approvals: bool = False
    save_document: bool = False
    lsp_proxy: bool = False
    pre_approved: bool = False
    """The client confirms some calls itself (VS Code's language-model tool dialog) and marks
    them `preApproved`; the mark counts only from a client that declared this."""
    secrets: bool = False
    """It asks the user for a password a command needs (toolhost/secret)."""
    apply_edit: bool = False
    work_done_progress: bool = False
    watched_files_dynamic: bool = False
    name: str | None = None
    """The client's name (initialize's clientInfo), shown in approvals."""


class ClientRequestError(Exception):
    """The client answered a request with a JSON-RPC error (eglot declines an edit so)."""


class UnreadableAnswer(ClientRequestError):
    """The client answered, but with something that is not the request's answer type (`{}`,
    an unknown decision, a bare string, an error that is not a JSON-RPC error object).

    `sent` shows what it sent: bounded, escaped to ASCII JSON, safe to quote to the model."""

    def __init__(self, sent: str, problem: str, peer: str = "the editor") -> None:
        super().__init__(f"{peer} gave an answer toolhost cannot read ({problem}); it sent {sent}")
        self.sent = sent
        self.problem = problem
        self.peer = peer

    @classmethod
    def of(cls, value: Any, problem: str, peer: str = "the editor") -> UnreadableAnswer:
        return cls(sent_preview(value), problem, peer)


def sent_preview(value: Any, limit: int = SENT_PREVIEW_CHARS) -> str:
    """What a client sent, as ASCII JSON cut to `limit` characters (control characters,
    lone surrogates and non-ASCII text escaped)."""
    try:
        text = json.dumps(value, ensure_ascii=True, default=repr)
    except (RecursionError, ValueError):
        return "(a value too deeply nested to show)"
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} chars in all)"


class ClientBridge(Protocol):
    @property
    def features(self) -> ClientFeatures: ...

    def notify(self, method: str, params: Any) -> None: ...

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        """Send a request to the client; raise TimeoutError when it does not answer and
        ClientRequestError when it answers with an error."""
        ...

    def show_message(self, text: str, level: str = "warning") -> None: ...


class NoClient:
    """Used by the CLI and unit tests: nobody to ask, notifications go nowhere."""

    def __init__(self) -> None:
        self.features = ClientFeatures()
        self.notifications: list[tuple[str, Any]] = []

    def notify(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        raise TimeoutError(f"no client to answer {method}")

    def show_message(self, text: str, level: str = "warning") -> None:
        self.notifications.append(("window/showMessage", {"message": text, "level": level}))
