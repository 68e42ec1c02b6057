"""When the MCP client's own permission step is the approval (`toolhost mcp --approvals
client`), and what a refusal says when a client answered a form nobody saw.

Agents such as Claude Code and Codex already ask before a tool runs (`--allowedTools`,
Codex's approval modes): asking again through toolhost is a second prompt, and headless runs
(`claude -p`, `codex exec`) cannot show toolhost's form at all. With `--approvals client`
toolhost's "ask" becomes "allow" for the connection, audited as approved by the client.
What no client's allow list may wave through still needs a person (`needs_person`): writes
to policy files, commands a deny rule could match unseen, and a command that asks to leave
the sandbox. Deny rules and readOnly mode are decided before anyone is asked, as always.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from lsp_server.policy.engine import CallFacts, Decision
from lsp_server.policy.prompt import Asker, ConditionalAsker
from lsp_server.protocol import ApproveParams

if TYPE_CHECKING:
    from lsp_server.runtime.context import Caller

# A decline or cancel this fast was not a person's: nobody reads a diff and decides in under two
# seconds, while headless agents on a busy machine take over one to answer (Codex: 1.1 s).
UNSEEN_SECONDS = 2.0
CLIENT_APPROVED = "client_approved"
# Who approved, when the face did not say which client made the call.
UNNAMED_CLIENT = "the MCP client"


class FormNotShown(Exception):
    """The client answered the approval form with decline/cancel without showing it."""

    def __init__(self, client: str, action: str, seconds: float) -> None:
        super().__init__(f"{client} answered {action} in {seconds * 1000:.0f} ms")
        self.client = client
        self.action = action
        self.seconds = seconds

    def reason(self, rules: Sequence[str], why: str) -> str:
        """Completes "<tool> was not allowed: ..." for the model (and so for the user)."""
        return (
            f"{self.client} answered toolhost's approval form with {self.action} "
            f"{self.seconds * 1000:.0f} ms after it was sent, without showing it to anyone "
            "(headless agents such as `claude -p` and `codex exec` answer every form this "
            f"way); it needed approval because {why}; what would allow it: " + ways_forward(rules)
        )


def ways_forward(rules: Sequence[str]) -> str:
    """The two ways to let such a call through without a form."""
    rule = f" such as {rules[0]}" if rules else ""
    return (
        "start toolhost with `toolhost mcp --approvals client` and allow the tool in the "
        "agent's own allow list (Claude Code --allowedTools, a Codex approval_mode, a Gemini "
        f"CLI policy rule), or add an allow rule{rule} to toolhost's config.toml [policy] allow"
    )


def needs_person(decision: Decision, facts: CallFacts) -> str | None:
    """Why the client's own approval is not enough for this call (None: it is)."""
    if decision.always_ask:
        return decision.reason
    plan = facts.sandbox
    if plan is not None and plan.requested != "default" and not plan.contained:
        return f"it asks to run {plan.escalation or 'outside the sandbox'}"
    return None


class ClientApprovals:
    """The asker of `--approvals client`: the client's permission step already approved the
    call; what needs a person goes to `person` (the client's form, when it can show one).
    `for_caller` gives the asker of the call at hand (ClientApproved)."""

    def __init__(self, person: ConditionalAsker | None) -> None:
        self.person = person

    def for_caller(self, caller: Caller | None) -> ClientApproved:
        person = self.person.for_caller(caller) if self.person is not None else None
        client = caller.client if caller is not None else None
        return ClientApproved(UNNAMED_CLIENT if client is None else client, person)

    async def __call__(self, request: ApproveParams) -> Any:
        """Asked with no call at hand (the policy asks `for_caller`'s asker): nobody."""
        return {"decision": "deny", "reason": "no person can be asked"}


@attrs.frozen
class ClientApproved:
    """`--approvals client` for one call: the client whose permission step approved it, and
    who is asked what needs a person (None: nobody)."""

    client: str
    person: Asker | None

    async def __call__(self, request: ApproveParams) -> Any:
        if self.person is None:
            return {"decision": "deny", "reason": "no person can be asked"}
        return await self.person(request)
