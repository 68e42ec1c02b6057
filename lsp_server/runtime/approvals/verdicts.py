"""The approval seam dispatch calls for every call: a Verdict (allow, or refuse with a code).

This default approver decides by mode and the unattended setting only; the policy package
(rules, prompts in the editor, audit) plugs in through the same `Approver` protocol.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from lsp_server.core.contract import ContractEntry
from lsp_server.core.errors import PERMISSION_RULE_DENIED, PERMISSION_UNATTENDED

if TYPE_CHECKING:
    from lsp_server.config.tree import PolicyConfig
    from lsp_server.runtime.context import Caller


@attrs.frozen
class ShellDetails:
    """What a person needs to judge a shell command besides its text."""

    cwd: Path
    background: bool
    timeout_ms: int | None


@attrs.frozen
class ApprovalRequest:
    call_id: str
    session: str
    tool: ContractEntry
    arguments: dict[str, Any]
    paths: tuple[Path, ...]
    write_paths: tuple[Path, ...]
    diff: str | None = None
    # Set when the client already confirmed this call itself (VS Code's LM tool dialog).
    pre_approved: bool = False
    shell: ShellDetails | None = None
    client: str | None = None
    """The agent chat or MCP client that made the call."""
    caller: Caller | None = None
    """Who the call is for, as its face knows them (runtime/context.py): an asker that
    depends on the call (an MCP client's form) asks through them."""


@attrs.frozen
class Verdict:
    allowed: bool
    decision: str  # allow | allow_once | allow_session | allow_always | client_approved | deny
    rule: str | None = None
    code: str | None = None
    reason: str | None = None
    approved_by: str | None = None
    """The MCP client whose own permission step approved the call (client_approved)."""

    def as_meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"decision": self.decision, "rule": self.rule}
        if self.approved_by is not None:
            meta["approvedBy"] = self.approved_by
        return meta


ALLOW = Verdict(True, "allow")


@attrs.frozen
class ApprovalPreview:
    """What `decide` would do, without asking anyone (toolhost/preview)."""

    would_ask: bool
    title: str
    summary: str
    risk: str
    refusal: Verdict | None = None
    """Set when the call would be refused without a prompt."""
    sandbox: str | None = None
    """For shell calls: how the command would be confined (as toolhost/approve says)."""


class Approver(Protocol):
    async def decide(self, request: ApprovalRequest) -> Verdict: ...

    def preview(self, request: ApprovalRequest) -> ApprovalPreview: ...

    def reconfigure(self, policy: PolicyConfig, problems: list[str]) -> None:
        """New settings arrived (workspace/configuration): decide by them from now on."""
        ...


class ModeApprover:
    """Read-only tools are allowed; others follow the mode, then the unattended setting."""

    def __init__(self, mode: str = "default", unattended: str = "deny") -> None:
        self.mode = mode
        self.unattended = unattended

    def reconfigure(self, policy: PolicyConfig, problems: list[str]) -> None:
        self.mode = policy.mode
        self.unattended = policy.unattended

    def preview(self, request: ApprovalRequest) -> ApprovalPreview:
        verdict = self._verdict(request)
        title = f"{request.tool.name} {', '.join(str(p) for p in request.paths)}".strip()
        return ApprovalPreview(
            would_ask=False,
            title=title,
            summary=f"Call {request.tool.name}; this runtime asks no one.",
            risk="low" if request.tool.read_only else "medium",
            refusal=None if verdict.allowed else verdict,
        )

    async def decide(self, request: ApprovalRequest) -> Verdict:
        return self._verdict(request)

    def _verdict(self, request: ApprovalRequest) -> Verdict:
        tool = request.tool
        if tool.read_only:
            return ALLOW
        if self.mode == "readOnly":
            return Verdict(
                False,
                "deny",
                "mode readOnly",
                PERMISSION_RULE_DENIED,
                "the policy mode is readOnly",
            )
        if self.mode == "bypass" or request.pre_approved:
            return ALLOW
        if self.mode == "acceptEdits" and tool.kind == "edit":
            return ALLOW
        if self.unattended == "allow":
            return Verdict(True, "allow", "unattended")
        return Verdict(
            False, "deny", None, PERMISSION_UNATTENDED, "no one could be asked to approve this call"
        )
