"""toolhost/preview: a call taken through dispatch up to the approval step, and no further.

Validation, confinement, the observation check and a writer's plan run as for a real call;
nothing is written, no command runs, no one is asked, and nothing is reported to listeners
(audit, didCall): a client uses this to show the real change before it confirms the call.
"""

from __future__ import annotations

import logging
import time
import uuid

from lsp_server.core.errors import INTERNAL_ERROR, PERMISSION_USER_DENIED, ToolError
from lsp_server.core.tool_output import WritePlan
from lsp_server.protocol import CallParams, ErrorInfo, PreviewParams, PreviewResult
from lsp_server.runtime import approval_step
from lsp_server.runtime.approvals.verdicts import ApprovalPreview, ApprovalRequest
from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.results.call_records import CallState

log = logging.getLogger(__name__)


async def preview_call(runtime: Runtime, params: PreviewParams) -> PreviewResult:
    call = CallParams(
        name=params.name,
        arguments=params.arguments,
        session=params.session or "default",
        call_id=f"preview-{uuid.uuid4().hex[:12]}",
        surface=params.surface,
    )
    assert call.call_id is not None
    tool = runtime.registry.get(call.name, call.surface or "full")
    if tool is None:
        unknown = runtime.unknown_tool(call, call.call_id, call.surface or "full", time.monotonic())
        return PreviewResult(False, call.name, "", [], "low", error=unknown.error)
    state = CallState(call_id=call.call_id, tool=tool, session=runtime.sessions.get(call.session))
    try:
        request = await _request(runtime, call, state)
    except ToolError as exc:
        return _refused(state, exc)
    except Exception as exc:  # the same boundary as dispatch: a bug becomes a value
        incident = uuid.uuid4().hex[:8]
        log.exception("internal error %s in the preview of %s", incident, tool.name)
        bug = ToolError(
            INTERNAL_ERROR,
            f"toolhost hit a bug ({type(exc).__name__}, incident {incident})",
            "the server keeps running; report the incident id from the log",
        )
        return _refused(state, bug)
    return _result(request, runtime.approver.preview(request))


def _refused(state: CallState, exc: ToolError) -> PreviewResult:
    """The real call would fail before any prompt, with this error."""
    contract = state.tool.contract
    return PreviewResult(
        would_ask=False,
        title=contract.name,
        summary="",
        paths=[str(p) for p in state.paths],
        risk="low" if contract.read_only else "medium",
        error=_error_info(exc),
    )


async def _request(runtime: Runtime, call: CallParams, state: CallState) -> ApprovalRequest:
    """The approval request the real call would make (a writer's plan included)."""
    ctx, write_paths = runtime.prepare(call, state, "root")
    diff = None
    if state.tool.contract.kind == "edit":
        # Writers' run() only plans (it reads and checks observations); publishing is
        # dispatch's step, which a preview never takes.
        async with runtime.locks.hold(write_paths):
            produced = await state.tool.run(ctx, state.arguments)
        diff = (
            approval_step.plan_diff(runtime.workspace, state, produced)
            if isinstance(produced, WritePlan)
            else ""
        )
    name = runtime.client.features.name
    return approval_step.approval_request(runtime.config, name, state, diff, pre_approved=False)


def _result(request: ApprovalRequest, verdict: ApprovalPreview) -> PreviewResult:
    shell = request.shell
    error = None
    if verdict.refusal is not None:
        refusal = verdict.refusal
        error = _error_info(
            ToolError(
                refusal.code or PERMISSION_USER_DENIED,
                f"{request.tool.name} would not be allowed: {refusal.reason}",
                "do not make this call; ask the user or choose another approach",
            )
        )
    return PreviewResult(
        would_ask=verdict.would_ask,
        title=verdict.title,
        summary=verdict.summary,
        paths=[str(p) for p in request.paths],
        risk=verdict.risk,  # type: ignore[arg-type]
        diff=request.diff,
        cwd=str(shell.cwd) if shell else None,
        background=shell.background if shell else None,
        timeout_ms=shell.timeout_ms if shell else None,
        sandbox=(verdict.sandbox or "none") if shell else None,
        error=error,
    )


def _error_info(exc: ToolError) -> ErrorInfo:
    details = dict(exc.details)
    return ErrorInfo(
        code=exc.code,
        message=exc.message,
        recovery=exc.recovery,
        signature=details.pop("signature", None),
        violations=details.pop("violations", None),
        details=details or None,
    )
