"""The runtime's approval seam backed by the policy: dispatch calls `decide()` for every
call after its paths are resolved and its diff is known, and gets a Verdict; `preview()`
says whether it would ask, without asking."""

from __future__ import annotations

from lsp_server.config.tree import PolicyConfig
from lsp_server.core.client import ClientBridge
from lsp_server.core.errors import PERMISSION_RULE_DENIED
from lsp_server.policy.answers import PolicyRefusal
from lsp_server.policy.authorizer import PolicyService
from lsp_server.policy.engine import CallFacts
from lsp_server.policy.prompt import Asker, ConditionalAsker, editor_asker
from lsp_server.protocol import ApproveParams
from lsp_server.runtime.approvals.verdicts import ApprovalPreview, ApprovalRequest, Verdict


def call_facts(service: PolicyService, request: ApprovalRequest) -> CallFacts:
    entry = request.tool
    command = request.arguments.get("command") if entry.kind == "shell" else None
    return service.facts(
        tool=entry.name,
        kind=entry.kind,
        read_only=entry.read_only,
        paths=[(p, "write" if p in request.write_paths else "read") for p in request.paths],
        command=command if isinstance(command, str) else None,
        cwd=request.shell.cwd if request.shell else None,
        verb=entry.approval_verb,
        arguments=request.arguments,
        call_id=request.call_id,
    )


async def _already_confirmed(request: ApproveParams) -> dict[str, str]:
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
        # Tested once: an isinstance test against a Protocol costs ~7 us, on every call.
        self._conditional = fallback_asker if isinstance(fallback_asker, ConditionalAsker) else None

    def asker_for(self, request: ApprovalRequest) -> Asker | None:
        if request.pre_approved:
            # The client confirmed this very call itself (VS Code's tool dialog); deny rules
            # and readOnly mode are still decided before this asker is consulted.
            return _already_confirmed
        if self.client is not None and self.client.features.approvals:
            return editor_asker(self.client, lambda: self.service.policy.approval_timeout_seconds)
        if self._conditional is not None:  # None: e.g. an MCP client that cannot show a form
            return self._conditional.for_caller(request.caller)
        return self.fallback_asker

    def preview(self, request: ApprovalRequest) -> ApprovalPreview:
        """Whether `decide` would ask, and the prompt's words, without asking anyone."""
        facts = call_facts(self.service, request)
        prompt = self.service.request(
            facts,
            call_id=request.call_id,
            session=request.session,
            arguments=request.arguments,
            diff=request.diff,
            shell=request.shell,
            client=request.client,
        )
        decision = self.service.decide(facts, request.session)
        refusal = None
        would_ask = decision.action == "ask" and self.asker_for(request) is not None
        if decision.action == "deny":
            refusal = Verdict(False, "deny", decision.rule, PERMISSION_RULE_DENIED, decision.reason)
        elif decision.action == "ask" and not would_ask:
            try:
                self.service.unattended(decision, prompt.suggested_rules)
            except PolicyRefusal as exc:
                refusal = Verdict(False, "deny", exc.rule, exc.code, exc.reason)
        return ApprovalPreview(
            would_ask, prompt.title, prompt.summary, prompt.risk, refusal, prompt.sandbox
        )

    async def decide(self, request: ApprovalRequest) -> Verdict:
        facts = call_facts(self.service, request)
        try:
            granted = await self.service.authorize(
                facts,
                call_id=request.call_id,
                session=request.session,
                arguments=request.arguments,
                diff=request.diff,
                ask=self.asker_for(request),
                shell=request.shell,
                client=request.client,
            )
        except PolicyRefusal as refusal:
            return Verdict(False, "deny", refusal.rule, refusal.code, refusal.reason)
        if granted.note and self.client is not None:
            self.client.show_message(f"toolhost: {granted.note}", "warning")
        return Verdict(True, granted.decision, granted.rule, approved_by=granted.approved_by)

    def reconfigure(self, policy: PolicyConfig, problems: list[str]) -> None:
        self.service.reconfigure(policy, problems)
