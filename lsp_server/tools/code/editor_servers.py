"""The editor's own language servers answering lsp_* questions (`toolhost/lspRequest`).

The editor already runs a warm server that knows the interpreter, tsconfig and settings the
user chose; a second copy started by toolhost knows none of that and takes seconds to
start. So when the client declared `lspProxy` and `lsp.provider` allows it, the question
goes to the editor first. `handled: false`, an error or no answer in time means toolhost's
own server answers (`auto`), or a clear `lsp.unavailable` (`editor`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import attrs

from lsp_server.core.errors import LSP_UNAVAILABLE, ToolError
from lsp_server.core.uris import path_to_uri
from lsp_server.protocol import TOOLHOST_LSP_REQUEST, LspRequestParams
from lsp_server.runtime.context import ToolContext

log = logging.getLogger(__name__)

_ALLOW_SPAWN = 'set lsp.provider to "auto" to let toolhost start its own language server'


@attrs.frozen
class EditorAnswer:
    result: Any
    server: str
    """The editor's server that answered, as the editor named it (e.g. "pyright")."""


@attrs.frozen
class Provenance:
    """Who answered, for the answer's last line and for toolhost/status."""

    answered_by: str
    """"editor" or "toolhost"."""
    server: str
    version: int | None
    """The editor buffer's version the answer is for; None: the file on disk."""

    def line(self) -> str:
        owner = "the editor's" if self.answered_by == "editor" else "toolhost's"
        subject = (
            f"the editor buffer (version {self.version})"
            if self.version is not None
            else "the file on disk"
        )
        return f"(answered by {owner} {self.server} for {subject})"


def document_uri(ctx: ToolContext, path: Path) -> tuple[str, int | None]:
    """The URI the editor knows the file by, and its buffer version when it is open."""
    documents = ctx.files.documents
    buffer = documents.open_document(path) if documents is not None else None
    version = getattr(buffer.version, "version", None) if buffer is not None else None
    uri = getattr(buffer.version, "uri", None) if buffer is not None else None
    return (uri if isinstance(uri, str) else path_to_uri(path)), version


async def ask_editor(ctx: ToolContext, method: str, params: dict[str, Any]) -> EditorAnswer | None:
    """The editor's answer, or None when toolhost's own server should answer."""
    lsp = ctx.config.lsp
    if lsp.provider == "spawn":
        return None
    if not ctx.client.features.lsp_proxy:
        if lsp.provider == "editor":
            raise ToolError(
                LSP_UNAVAILABLE,
                'lsp.provider is "editor" but this editor does not answer language '
                "questions for toolhost (it did not declare lspProxy)",
                _ALLOW_SPAWN,
            )
        return None
    reason = await _ask(ctx, method, params)
    if isinstance(reason, EditorAnswer):
        return reason
    log.info("%s answered by toolhost's own server: %s", method, reason)
    if lsp.provider == "editor":
        raise ToolError(LSP_UNAVAILABLE, reason, _ALLOW_SPAWN)
    return None


async def _ask(ctx: ToolContext, method: str, params: dict[str, Any]) -> EditorAnswer | str:
    """The answer, or why there is none."""
    timeout = ctx.config.lsp.editor_timeout_seconds
    try:
        answer = await ctx.client.request(
            TOOLHOST_LSP_REQUEST, LspRequestParams(method=method, params=params), timeout
        )
    except TimeoutError:
        return f"the editor did not answer {method} within {timeout:g} s"
    except Exception as exc:  # an editor's failure must not fail the tool: ours answers
        return f"the editor answered {method} with an error: {exc}"
    if not _field(answer, "handled"):
        return "the editor has no language server for this file"
    server = _field(answer, "server")
    return EditorAnswer(_field(answer, "result"), str(server) if server else "language server")


def _field(answer: Any, name: str) -> Any:
    if isinstance(answer, dict):
        return answer.get(name)
    return getattr(answer, name, None)
