"""The policy engine behind the runtime's approval seam, and the audit listener.

`PolicyApprover.decide()` is what dispatch calls for every call (writers: with their diff);
`AuditListener` receives every finished call (dispatch's CallRecord) and writes its line.
"""

from __future__ import annotations

import logging
from typing import Any

from lsp_server import protocol
from lsp_server.policy.approval import ApprovalRequest as PromptRequest
from lsp_server.policy.audit import AuditLog, AuditRecord
from lsp_server.policy.engine import CallFacts
from lsp_server.policy.service import Asker, PolicyRefusal, PolicyService
from lsp_server.runtime.approvals import ApprovalRequest, Decision
from lsp_server.runtime.client import ClientBridge
from lsp_server.runtime.dispatch import CallRecord

log = logging.getLogger(__name__)

APPROVE_METHOD = "toolhost/approve"
# The client's own deadline is a little longer than ours, so our timeout decides.
_CLIENT_TIMEOUT_MARGIN = 5.0


def call_facts(service: PolicyService, request: ApprovalRequest) -> CallFacts:
    entry = request.tool
    command = request.arguments.get("command") if entry.kind == "shell" else None
    return service.facts(
        tool=entry.name,
        kind=entry.kind,
        read_only=entry.read_only,
        paths=[(p, "write" if p in request.write_paths else "read") for p in request.paths],
        command=command if isinstance(command, str) else None,
        cwd=request.cwd,
    )


def client_asker(client: ClientBridge, service: PolicyService) -> Asker:
    """Asks through `toolhost/approve`; each call awaits its own request, so concurrent
    prompts never wait for one another."""

    async def ask(prompt: PromptRequest) -> Any:
        params = protocol.ApproveParams(
            call_id=prompt.call_id,
            session=prompt.session,
            tool=prompt.tool,
            read_only=prompt.read_only,
            title=prompt.title,
            summary=prompt.summary,
            arguments=dict(prompt.arguments),
            paths=list(prompt.paths),
            diff=prompt.diff,
            risk=prompt.risk,
            suggested_rules=list(prompt.suggested_rules),
        )
        timeout = service.policy.approval_timeout_seconds + _CLIENT_TIMEOUT_MARGIN
        return await client.request(APPROVE_METHOD, params, timeout)

    return ask


async def _already_confirmed(prompt: PromptRequest) -> dict[str, str]:
    return {"decision": "allow_once"}


class PolicyApprover:
    """The runtime's Approver, backed by the policy service.

    `asker_for()` picks who is asked when policy says "ask": the editor when it declared
    the approvals capability, else whatever `fallback_asker` gives (the CLI's terminal
    prompt or --yes), else nobody (the unattended decision)."""

    def __init__(
        self,
        service: PolicyService,
        client: ClientBridge | None = None,
        fallback_asker: Asker | None = None,
    ) -> None:
        self.service = service
        self.client = client
        self.fallback_asker = fallback_asker

    def asker_for(self, request: ApprovalRequest) -> Asker | None:
        if request.pre_approved:
            # The client confirmed this very call itself (VS Code's tool dialog); deny rules
            # and readOnly mode are still decided before this asker is consulted.
            return _already_confirmed
        if self.client is not None and self.client.features.approvals:
            return client_asker(self.client, self.service)
        return self.fallback_asker

    async def decide(self, request: ApprovalRequest) -> Decision:
        facts = call_facts(self.service, request)
        try:
            granted = await self.service.authorize(
                facts,
                call_id=request.call_id,
                session=request.session,
                arguments=request.arguments,
                diff=request.diff,
                ask=self.asker_for(request),
            )
        except PolicyRefusal as refusal:
            return Decision(False, "deny", refusal.rule, refusal.code, refusal.reason)
        if granted.note and self.client is not None:
            self.client.show_message(f"toolhost: {granted.note}", "warning")
        return Decision(True, granted.decision, granted.rule)


class AuditListener:
    """Writes one audit line per finished call. Registered before the didCall listener, so
    a client that sees didCall can already read the matching line."""

    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit

    def __call__(self, record: CallRecord) -> None:
        try:
            # One small O_APPEND write: cheaper than a thread hop, and keeps the order.
            self.audit.write(
                AuditRecord(
                    call_id=record.call_id,
                    session=record.session,
                    tool=record.tool,
                    arguments_digest=record.arguments_digest,
                    paths=record.paths,
                    decision=record.decision or "none",
                    rule=record.rule,
                    outcome=record.code or "ok",
                    duration_ms=record.duration_ms,
                )
            )
        except OSError:
            log.exception("could not write the audit log %s", self.audit.path)
