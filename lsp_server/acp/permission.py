"""Where policy says "ask": ACP's `session/request_permission` to the editor, so the user
answers in the editor's own ACP permission UI. A write shows as a tool call whose content
is `{"type": "diff", path, oldText, newText}`; other calls show their title and diff text.

The options and what toolhost makes of them:
  allow_once  "Allow once"                        -> allow_once
  allow_always "Allow for this session"            -> allow_session (a session rule)
  allow_always "Always allow (saved to .toolhost.toml)" -> allow_always (the rule is saved)
  reject_once "Deny"                               -> deny
No reject_always: toolhost does not remember denials, and an option that says "always" must
do so. A cancelled prompt (the turn was cancelled) is a dismissed denial.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_server.acp.peers import Peer
from lsp_server.fs import textio
from lsp_server.protocol import ApproveParams
from lsp_server.tools.registry import build_registry

log = logging.getLogger(__name__)

REQUEST_PERMISSION = "session/request_permission"

OPTIONS: tuple[tuple[str, str, str, str], ...] = (
    # optionId, name, ACP kind, toolhost decision
    ("allow_once", "Allow once", "allow_once", "allow_once"),
    ("allow_session", "Allow for this session", "allow_always", "allow_session"),
    ("allow_always", "Always allow (saved to .toolhost.toml)", "allow_always", "allow_always"),
    ("deny", "Deny", "reject_once", "deny"),
)
_DECISIONS = {option_id: decision for option_id, _, _, decision in OPTIONS}

# Tools whose `content` argument is the whole new text of their one file (no contract entry
# says so: its diff is shown against the buffer instead of the call's text).
_WHOLE_FILE_WRITERS = ("write", "write_file")

# Which ACP session a toolhost session's prompt goes to (None: no ACP session to ask in).
SessionLookup = Callable[[str], str | None]
# A file's unsaved text in the editor (None: the disk has it).
BufferLookup = Callable[[Path], str | None]


class PermissionAsker:
    """The runtime's asker (compose.open_runtime(asker=...)) for one `toolhost acp`."""

    def __init__(self, editor: Peer, acp_session: SessionLookup, buffer_text: BufferLookup) -> None:
        self.editor = editor
        self._acp_session = acp_session
        self._buffer_text = buffer_text

    async def __call__(self, request: ApproveParams) -> dict[str, Any]:
        session_id = self._acp_session(request.session)
        if session_id is None or self.editor.closed:
            raise TimeoutError("no ACP session to ask in")
        params = {
            "sessionId": session_id,
            "toolCall": tool_call(request, self._buffer_text),
            "options": [
                {"optionId": option_id, "name": name, "kind": kind}
                for option_id, name, kind, _ in OPTIONS
            ],
        }
        # The policy's own approval timeout bounds this wait (authorizer._ask).
        answer = await self.editor.request(REQUEST_PERMISSION, params)
        return decision_of(answer)


def tool_call(request: ApproveParams, buffer_text: BufferLookup) -> dict[str, Any]:
    """The ToolCallUpdate the editor shows: the diff of a write, else the text of the call."""
    arguments = request.arguments if isinstance(request.arguments, dict) else {}
    call: dict[str, Any] = {
        "toolCallId": f"toolhost-{request.call_id}",
        "title": request.title,
        "kind": _kind(request),
        "status": "pending",
        "rawInput": arguments,
        "locations": [{"path": path} for path in request.paths],
    }
    content = arguments.get("content")
    if request.tool in _WHOLE_FILE_WRITERS and len(request.paths) == 1 and isinstance(content, str):
        path = request.paths[0]  # the real, absolute path
        old = buffer_text(Path(path))
        if old is None:
            old = _current_text(Path(path))
        call["content"] = [{"type": "diff", "path": path, "oldText": old, "newText": content}]
    else:
        text = request.summary + (f"\n\n{request.diff}" if request.diff else "")
        call["content"] = [{"type": "content", "content": {"type": "text", "text": text}}]
    return call


def _kind(request: ApproveParams) -> str:
    """ACP's tool kind, from the tool's contract entry: a writer edits, a command executes."""
    registry = build_registry("acp")
    tool = registry.get(request.tool) or registry.get(request.tool, "minimal")
    if tool is not None and tool.contract.kind == "edit":
        return "edit"
    return "execute" if request.cwd is not None else "other"


def decision_of(answer: Any) -> dict[str, Any]:
    """The editor's RequestPermissionResponse as toolhost's approval answer."""
    outcome = answer.get("outcome") if isinstance(answer, dict) else None
    if not isinstance(outcome, dict):
        return {"decision": "not an ACP permission outcome"}  # read as unreadable
    if outcome.get("outcome") == "cancelled":
        return {"decision": "deny", "dismissed": True}
    decision = _DECISIONS.get(str(outcome.get("optionId")))
    if outcome.get("outcome") != "selected" or decision is None:
        return {"decision": f"unknown option {outcome.get('optionId')!r}"}
    return {"decision": decision}


def _current_text(path: Path) -> str | None:
    """The file as it is on disk now (None: it does not exist yet, a new file)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        text, _, _ = textio.decode(data)
    except textio.DecodeError:
        return None
    return text
