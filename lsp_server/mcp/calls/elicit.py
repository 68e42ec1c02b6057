"""Approvals for a local MCP runtime: an elicitation form when the MCP client declared
elicitation, otherwise nobody is asked and policy decides alone (permission.unattended).
A form declined or cancelled faster than anyone could read it was not shown to anyone
(permission.form_not_shown)."""

from __future__ import annotations

import logging
import time
from typing import Any

from lsp_server.core.client import UnreadableAnswer
from lsp_server.policy.client_approvals import UNSEEN_SECONDS, FormNotShown
from lsp_server.policy.prompt import Asker
from lsp_server.protocol import ApproveParams as PromptRequest
from lsp_server.runtime.context import Caller, Elicit

log = logging.getLogger(__name__)

CHOICES = (
    ("allow_once", "Allow once"),
    ("allow_session", "Allow for this session"),
    ("deny", "Deny"),
)
MAX_DIFF_CHARS = 20_000
LEAD_CHANGED_LINES = 12
MCP_CLIENT = "the MCP client"

FORM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Decision",
            "oneOf": [{"const": value, "title": title} for value, title in CHOICES],
            "default": "deny",
        },
        "reason": {
            "type": "string",
            "title": "Reason (tells the agent why, when you deny)",
        },
    },
    "required": ["decision"],
}


def changed_lines(diff: str | None) -> list[str]:
    """The lines a diff adds or removes, without its file headers."""
    return [
        line
        for line in (diff or "").splitlines()
        if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))
    ]


def form_message(prompt: PromptRequest) -> str:
    """The form's text, leading with the change: clients fold a long message after its first
    lines (Claude Code shows three), so what changes comes before the fold and the rest
    (the title, risk, paths and the whole diff) follows."""
    changed = changed_lines(prompt.diff)
    lead = prompt.summary.rstrip(".") if changed else prompt.title
    lines = [lead, *changed[:LEAD_CHANGED_LINES]]
    if len(changed) > LEAD_CHANGED_LINES:
        lines.append(f"[... {len(changed) - LEAD_CHANGED_LINES} more changed lines below]")
    lines.append("")
    lines += [text for text in (prompt.title, prompt.summary) if text.rstrip(".") != lead]
    lines.append(f"Risk: {prompt.risk}")
    lines += [f"Path: {path}" for path in prompt.paths]
    if prompt.suggested_rules:
        lines.append(f"Allow for this session remembers: {prompt.suggested_rules[0]}")
    if prompt.diff:
        diff = prompt.diff
        if len(diff) > MAX_DIFF_CHARS:
            diff = (
                diff[:MAX_DIFF_CHARS]
                + f"\n[... {len(prompt.diff) - MAX_DIFF_CHARS} chars of the diff not shown ...]"
            )
        lines += ["", diff.rstrip("\n")]
    return "\n".join(lines)


def answer_from(action: str, content: dict[str, Any] | None) -> dict[str, str]:
    """The form's answer as a toolhost/approve answer; UnreadableAnswer when it is none of
    the form's choices (the client did not hold to the form's schema)."""
    if action == "decline":
        return {"decision": "deny", "reason": "the user declined in the MCP client"}
    if action == "cancel":
        return {"decision": "deny", "reason": "the user dismissed the approval form"}
    if action != "accept":
        raise unreadable_answer({"action": action}, "its action is not accept, decline or cancel")
    if not isinstance(content, dict):
        raise unreadable_answer({"action": action, "content": content}, "no form content")
    decision = content.get("decision")
    reason = content.get("reason")
    if decision not in [value for value, _ in CHOICES]:
        raise unreadable_answer(content, "its decision is not one of the form's choices")
    answer = {"decision": str(decision)}
    if isinstance(reason, str) and reason.strip():
        answer["reason"] = reason.strip()
    return answer


def unreadable_answer(sent: Any, problem: str) -> UnreadableAnswer:
    """A form answer toolhost cannot read, logged for the MCP client's developer."""
    answer = UnreadableAnswer.of(sent, problem, MCP_CLIENT)
    log.warning("the MCP client's approval answer cannot be read: %s", answer)
    return answer


class ElicitationAsker:
    """The policy's asker for a local MCP runtime: the call's own elicitation form, which its
    caller brings (Caller.elicit). A call whose client cannot be asked brings none: then
    nobody is asked and the policy decides alone (permission.unattended)."""

    def for_caller(self, caller: Caller | None) -> Asker | None:
        if caller is None or caller.elicit is None:
            return None
        return FormAsker(caller.elicit, MCP_CLIENT if caller.client is None else caller.client)

    async def __call__(self, request: PromptRequest) -> dict[str, str]:
        """Asked with no call's form at hand (the policy asks `for_caller`'s asker)."""
        return {"decision": "deny", "reason": "the MCP client cannot be asked"}


class FormAsker:
    """One call's approval asked by its client's form (`client`: its name, for the refusal
    of a form answered faster than anyone could read it)."""

    def __init__(self, elicit: Elicit, client: str) -> None:
        self.elicit = elicit
        self.client = client

    async def __call__(self, request: PromptRequest) -> dict[str, str]:
        sent = time.monotonic()
        action, content = await self.elicit(form_message(request), FORM_SCHEMA)
        seconds = time.monotonic() - sent
        if action in ("decline", "cancel") and seconds < UNSEEN_SECONDS:
            log.info("%s answered the form with %s in %.3f s", self.client, action, seconds)
            raise FormNotShown(self.client, action, seconds)
        return answer_from(action, content)
