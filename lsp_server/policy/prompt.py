"""`toolhost/approve`: what the editor is asked (protocol.ApproveParams, worded here), the
answer it gives back, and the asker that sends the request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import attrs

from lsp_server.core.client import ClientBridge
from lsp_server.policy.engine import CallFacts
from lsp_server.protocol import TOOLHOST_APPROVE, ApproveParams
from lsp_server.sandbox import SandboxPlan

if TYPE_CHECKING:
    from lsp_server.runtime.context import Caller

Answer = Literal["allow_once", "allow_session", "allow_always", "deny"]
ANSWERS: tuple[Answer, ...] = ("allow_once", "allow_session", "allow_always", "deny")

# Sends a request to whoever can answer (the editor, a terminal); None: nobody can be asked.
Asker = Callable[[ApproveParams], Awaitable[Any]]


@runtime_checkable
class ConditionalAsker(Protocol):
    """An asker that depends on whom the call is for (an MCP client's form): `for_caller`
    gives the asker of the call at hand, or None when nobody can be asked (a client that
    cannot show a form), as if there were no asker."""

    def for_caller(self, caller: Caller | None) -> Asker | None: ...

    async def __call__(self, request: ApproveParams) -> Any: ...


@attrs.frozen
class ApprovalAnswer:
    decision: Answer
    rule: str | None = None
    reason: str | None = None
    dismissed: bool = False

    @classmethod
    def from_result(cls, result: Any) -> ApprovalAnswer:
        """Read the client's answer; ValueError says why an unreadable one is refused."""
        if attrs.has(type(result)):  # the typed protocol.ApproveResult
            result = attrs.asdict(result)
        elif hasattr(result, "_asdict"):  # an untyped pygls namedtuple
            result = result._asdict()
        if not isinstance(result, Mapping):
            raise ValueError("it is not an object")
        decision = result.get("decision")
        if decision not in ANSWERS:
            raise ValueError("its decision is not one of " + ", ".join(ANSWERS))
        rule = result.get("rule")
        reason = result.get("reason")
        return cls(
            decision,
            rule=rule if isinstance(rule, str) and rule.strip() else None,
            reason=reason if isinstance(reason, str) and reason.strip() else None,
            dismissed=result.get("dismissed") is True,
        )


def sandbox_label(plan: SandboxPlan | None) -> str:
    """How a shell command is confined, as toolhost/approve says it: the sandbox mode
    (`workspace-write`, `read-only`), with `+network` when it may reach the network, or
    `none` when it runs outside any sandbox."""
    if plan is None or not plan.sandboxed:
        return "none"
    return f"{plan.mode}+network" if plan.network else str(plan.mode)


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _change_size(diff: str | None) -> str:
    """What the diff changes, in words that need no diff beside them."""
    if diff is None or not diff.strip():
        return ""
    lines = diff.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    files = max(1, sum(1 for line in lines if line.startswith("+++ ")))
    where = f" in {files} files" if files > 1 else ""
    return f": {added} line{'s' * (added != 1)} added, {removed} removed{where}"


def describe(
    facts: CallFacts, arguments: Mapping[str, Any], relative: list[str], diff: str | None = None
) -> tuple[str, str]:
    """A short human title and a one-sentence summary of what the call will do."""
    if facts.command is not None:
        plan = facts.sandbox
        how = f" {plan.escalation}" if plan is not None and plan.escalation else ""
        title = f"Run{how}: {_clip(facts.command)}"
        purpose = arguments.get("description")
        summary = (
            f"{purpose.rstrip('.')}."
            if isinstance(purpose, str) and purpose.strip()
            else f"Run the shell command `{_clip(facts.command, 200)}` in the workspace."
        )
        if plan is not None:
            summary += f" How it runs: {plan.describe()}."
        return title, summary
    verb = facts.verb or facts.tool
    if facts.tool == "move_file" and len(relative) == 2:
        return f"Move {relative[0]} → {relative[1]}", f"Rename {relative[0]} to {relative[1]}."
    if facts.tool == "job_kill":
        job = arguments.get("job_id", "?")
        return f"Stop job {job}", f"Kill the process group of background job {job}."
    target = ", ".join(relative) if relative else "(no file)"
    if facts.read_only:  # a preview of a reader: nothing changes
        return f"{verb} {target}", f"{verb} {target}; it changes nothing."
    return f"{verb} {target}", f"{verb} {target}{_change_size(diff)}."


# The client's own deadline is a little longer than ours, so our timeout decides.
_CLIENT_TIMEOUT_MARGIN = 5.0


def editor_asker(client: ClientBridge, timeout_seconds: Callable[[], float]) -> Asker:
    """Asks through `toolhost/approve`; each call awaits its own request, so concurrent
    prompts never wait for one another."""

    async def ask(request: ApproveParams) -> Any:
        timeout = timeout_seconds() + _CLIENT_TIMEOUT_MARGIN
        return await client.request(TOOLHOST_APPROVE, request, timeout)

    return ask
