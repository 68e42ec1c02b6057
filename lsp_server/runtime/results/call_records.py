"""The results of calls: a CallResult for a success, a failure or an unknown tool (text
bounded, the full text stored for paging), and the record every listener receives."""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import logging
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from lsp_server.core import errors
from lsp_server.core.contract import Registry, Surface, Tool
from lsp_server.core.errors import ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.protocol import CallMeta, CallParams, CallResult, DidCallParams, ErrorInfo
from lsp_server.runtime.results.bounding import PAGING_NOTE_CHARS, bound_text, paging_note

if TYPE_CHECKING:
    from lsp_server.runtime.approvals.verdicts import Verdict
    from lsp_server.runtime.sessions.session import Session

log = logging.getLogger(__name__)


@attrs.define
class CallState:
    """What dispatch learns about one call while it runs."""

    call_id: str
    tool: Tool
    session: Session
    arguments: dict[str, Any] = attrs.Factory(dict)
    paths: list[Path] = attrs.Factory(list)
    written: list[Path] = attrs.Factory(list)
    verdict: Verdict | None = None


def call_meta(state: CallState, started: float, **fields: Any) -> CallMeta:
    entry = state.tool.contract
    return CallMeta(
        tool=entry.name,
        read_only=entry.read_only,
        duration_ms=round((time.monotonic() - started) * 1000, 3),
        truncated=fields.get("truncated", False),
        shown_chars=fields.get("shown", 0),
        total_chars=fields.get("total", 0),
        result_ref=fields.get("ref"),
        approval=state.verdict.as_meta() if state.verdict else None,
        paths=[str(p) for p in state.paths],
    )


def success(state: CallState, output: ToolOutput, started: float, max_chars: int) -> CallResult:
    ref = None
    if len(output.text) > max_chars:  # the cut text names the stored full text
        ref = state.session.results.store(output.text)
        # Leave room for the paging note inside the limit.
        max_chars = max(max_chars // 2, max_chars - PAGING_NOTE_CHARS)
    bounded = bound_text(output.text, max_chars, ref)
    text = bounded.text
    if ref is not None:
        text += paging_note(ref, bounded.total_chars, bounded.omitted_offset or 0)
    content: list[Any] = [{"type": "text", "text": text}]
    for image in output.images:
        content.append(
            {
                "type": "image",
                "mimeType": image.mime_type,
                "data": base64.b64encode(image.data).decode("ascii"),
            }
        )
    meta = call_meta(
        state,
        started,
        truncated=bounded.truncated,
        shown=len(text),
        total=bounded.total_chars,
        ref=ref,
    )
    return CallResult(call_id=state.call_id, is_error=False, content=content, meta=meta)


def failure(state: CallState, exc: ToolError, started: float, max_chars: int) -> CallResult:
    for path in exc.paths:
        if path not in state.paths:
            state.paths.append(path)
    message = exc.cause if exc.code == errors.SCHEMA_MISMATCH else exc.message
    text = message
    ref = None
    if exc.partial_text:
        if len(exc.partial_text) > max_chars:
            ref = state.session.results.store(exc.partial_text)
        bounded = bound_text(exc.partial_text, max_chars, ref)
        if ref is not None:
            offset = bounded.omitted_offset or 0
            text = bounded.text + paging_note(ref, bounded.total_chars, offset) + f"\n{message}"
        else:
            text = f"{bounded.text}\n{message}"
    details = dict(exc.details)
    signature = details.pop("signature", None)
    violations = details.pop("violations", None)
    error = ErrorInfo(
        code=exc.code,
        message=message,
        recovery=exc.recovery,
        signature=signature,
        violations=violations,
        details=details or None,
    )
    meta = call_meta(state, started, shown=len(text), total=len(text), ref=ref)
    return CallResult(
        call_id=state.call_id,
        is_error=True,
        content=[{"type": "text", "text": text}],
        meta=meta,
        error=error,
    )


def unknown_tool(
    registry: Registry, params: CallParams, call_id: str, surface: Surface, started: float
) -> CallResult:
    names = registry.names(surface)
    close = difflib.get_close_matches(params.name, names, n=3, cutoff=0.4)
    hint = f"did you mean {', '.join(close)}?" if close else "no similar name"
    message = (
        f"{errors.UNKNOWN_TOOL}: no tool named {params.name!r} on the {surface} surface "
        f"({hint}); call one of: {', '.join(names)}"
    )
    error = ErrorInfo(
        code=errors.UNKNOWN_TOOL,
        message=message,
        recovery="use one of the listed tool names",
        details={"closest": close},
    )
    return refused_before_start(params.name, call_id, error, time.monotonic() - started)


def refused_before_start(
    tool: str, call_id: str, error: ErrorInfo, seconds: float = 0.0
) -> CallResult:
    """A call refused before any tool ran (an unknown name, a refused root): its message
    is the whole text."""
    message = error.message
    meta = CallMeta(
        tool=tool,
        read_only=True,
        duration_ms=round(seconds * 1000, 3),
        truncated=False,
        shown_chars=len(message),
        total_chars=len(message),
        result_ref=None,
        approval=None,
        paths=[],
    )
    content = [{"type": "text", "text": message}]
    return CallResult(call_id=call_id, is_error=True, content=content, meta=meta, error=error)


def call_record(state: CallState, result: CallResult) -> DidCallParams:
    """What every listener (audit, didCall, index refresh) learns about a finished call."""
    digest = digest_of(state.arguments)
    verdict = state.verdict
    record = DidCallParams(
        call_id=state.call_id,
        session=state.session.id,
        tool=state.tool.name,
        decision=verdict.decision if verdict else None,
        rule=verdict.rule if verdict else None,
        is_error=result.is_error,
        code=result.error.code if result.error else None,
        duration_ms=result.meta.duration_ms,
        paths=[str(p) for p in state.paths],
        read_only=state.tool.contract.read_only,
        arguments_digest=digest,
        written=[str(p) for p in state.written],
        approved_by=verdict.approved_by if verdict else None,
        agent=state.session.agent,
    )
    return record


def unknown_record(params: CallParams, session: str, result: CallResult) -> DidCallParams:
    """What the listeners learn about a call of a tool that does not exist (none ran)."""
    arguments = params.arguments if isinstance(params.arguments, dict) else {}
    return DidCallParams(
        call_id=result.call_id,
        session=session,
        tool=params.name,
        decision=None,
        rule=None,
        is_error=True,
        code=errors.UNKNOWN_TOOL,
        duration_ms=result.meta.duration_ms,
        paths=[],
        read_only=True,
        arguments_digest=digest_of(arguments),
    )


def digest_of(arguments: Any) -> str:
    try:
        encoded = json.dumps(arguments, sort_keys=True, default=str).encode()
    except (RecursionError, ValueError, TypeError):  # odd input (an unknown tool's arguments)
        encoded = repr(type(arguments)).encode()
    return hashlib.sha256(encoded).hexdigest()[:16]


def internal_error(exc: BaseException, tool_name: str) -> ToolError:
    """A bug, as a value: logged with its traceback under an incident id."""
    incident = uuid.uuid4().hex[:8]
    log.error("internal error %s in %s", incident, tool_name, exc_info=exc)
    return ToolError(
        errors.INTERNAL_ERROR,
        f"toolhost hit a bug ({type(exc).__name__}, incident {incident})",
        "the server keeps running; report the incident id from the log, or try another way",
    )


def with_notice(result: CallResult, notice: str | None) -> None:
    """Put `notice` at the top of the result's text: a session's first result says why its
    calls are refused (a managed config that failed closed), to the agent and the reader."""
    if notice and result.content and result.content[0].get("type") == "text":
        result.content[0]["text"] = f"{notice}\n\n{result.content[0]['text']}"
