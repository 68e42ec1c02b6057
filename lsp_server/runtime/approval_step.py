"""The approval step of a call and the publishing of a writer's plan: what the approver is
asked (a writer: with the diff of its plan; a shell call: how it would run), the refusal the
model reads when it is not allowed, and the plan written under a checkpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.core import errors
from lsp_server.core.contract import JudgedCommand
from lsp_server.core.diffs import unified_diff
from lsp_server.core.errors import ToolError
from lsp_server.core.tool_output import FileChange, ToolOutput, WritePlan
from lsp_server.fs.workspace import Workspace
from lsp_server.runtime.approvals.verdicts import ApprovalRequest, Approver, ShellDetails
from lsp_server.runtime.context import Caller, ToolContext
from lsp_server.runtime.results.call_records import CallState

if TYPE_CHECKING:
    from lsp_server.config.tree import Config

# The next step after a denial, said in one place (a policy reason says only why).
_DENIAL_RECOVERY = {
    errors.PERMISSION_UNATTENDED: "do not retry the same call; an allow rule or the user can "
    "permit it, or choose another approach",
    errors.PERMISSION_FORM_NOT_SHOWN: "do not retry the same call; tell the user what "
    "would allow it (above), or choose another approach",
    errors.PERMISSION_UNREADABLE_ANSWER: "do not retry the same call; tell the user the "
    "approval prompt is not working (toolhost logged what their client sent), or choose "
    "another approach",
}
_DEFAULT_RECOVERY = "do not retry the same call; ask the user or choose another approach"


def plan_diff(workspace: Workspace, state: CallState, plan: WritePlan) -> str:
    """The unified diff of a writer's plan; adds the plan's paths to the call's."""
    diff = "".join(
        unified_diff(
            change.before.text if change.before else "",
            change.after if change.after is not None else "",
            workspace.relative(change.path),
        )
        for change in plan.changes
        if change.destination is None
    )
    for change in plan.changes:
        for path in (change.path, change.destination):
            if path is not None and path not in state.paths:
                state.paths.append(path)
    return diff


def approval_request(
    config: Config,
    client_name: str | None,
    state: CallState,
    diff: str | None,
    pre_approved: bool,
    caller: Caller | None = None,
) -> ApprovalRequest:
    """What the approver is asked about this call (a shell call: how it would run), for
    `caller` (who can be asked: their form, when they have one)."""
    entry = state.tool.contract
    shell = None
    if state.tool.shell_launch is not None:
        how = state.tool.shell_launch(config, state.arguments)
        shell = ShellDetails(state.session.cwd, how.background, how.timeout_ms)
    return ApprovalRequest(
        call_id=state.call_id,
        session=state.session.id,
        tool=entry,
        arguments=state.arguments,
        paths=tuple(state.paths),
        write_paths=tuple(p for p in state.paths if not entry.read_only),
        diff=diff,
        pre_approved=pre_approved,
        shell=shell,
        client=client_name,
        caller=caller,
    )


async def approve_judged(
    approver: Approver, client_name: str | None, state: CallState, ctx: ToolContext
) -> None:
    """A call that amounts to a shell command (text typed into a shell or interpreter:
    Tool.judge) is approved as that command too, after its own approval."""
    if state.tool.judge is None:
        return
    judged = await state.tool.judge(ctx, state.arguments)
    if judged is not None:
        await approve(approver, judged_request(client_name, state, judged), state)


def judged_request(
    client_name: str | None, state: CallState, judged: JudgedCommand
) -> ApprovalRequest:
    """The approval of the shell command a call amounts to, asked as it would be."""
    return ApprovalRequest(
        call_id=state.call_id,
        session=state.session.id,
        tool=judged.tool,
        arguments=judged.arguments,
        paths=(),
        write_paths=(),
        shell=ShellDetails(judged.cwd, True, None),
        client=client_name,
    )


async def approve(approver: Approver, request: ApprovalRequest, state: CallState) -> None:
    """Ask the approver; a refusal is a ToolError saying why and what to do next."""
    verdict = await approver.decide(request)
    state.verdict = verdict
    if not verdict.allowed:
        code = verdict.code or errors.PERMISSION_USER_DENIED
        reason = verdict.reason or "the call was not approved"
        raise ToolError(
            code,
            f"{state.tool.contract.name} was not allowed: {reason}",
            _DENIAL_RECOVERY.get(code, _DEFAULT_RECOVERY),
        )


async def publish(
    checkpoints: Checkpoints | None, state: CallState, ctx: ToolContext, plan: WritePlan
) -> ToolOutput:
    """Write an approved plan's changes, recorded by the checkpoints around the write."""
    notes = []
    window = (
        await checkpoints.before_write(
            state.call_id,
            state.session.id,
            state.tool.name,
            [(change.path, change.destination) for change in plan.changes],
            reported=[change.path for change in plan.changes if _replaces(change)],
        )
        if checkpoints
        else None
    )
    witness = checkpoints.witness(window) if checkpoints else None
    if window is not None:
        window.agent = state.session.agent
    try:
        for change in plan.changes:
            note = await ctx.files.publish(change, witness)
            state.written.append(change.destination or change.path)
            if note:
                notes.append(note)
    finally:
        if checkpoints is not None:
            await checkpoints.after_write(window)
            failed = checkpoints.take_failure(state.call_id)
            if failed is not None:
                notes.append(f"[no checkpoint: {failed}; toolhost/revert cannot undo this call]")
    return ToolOutput(plan.message + "".join(f"\n{note}" for note in notes))


def _replaces(change: FileChange) -> bool:
    """A change whose publish replaces a file in place (the witness is told its states)."""
    has_after = change.after is not None or change.raw_after is not None
    return change.before is not None and change.destination is None and has_after
