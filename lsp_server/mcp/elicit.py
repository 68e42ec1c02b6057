"""Approvals for a local MCP runtime: an elicitation form when the MCP client declared
elicitation, otherwise nobody is asked and policy decides alone (permission.unattended)."""

from __future__ import annotations

from typing import Any

from lsp_server.mcp.current import CURRENT_ELICIT
from lsp_server.protocol import ApproveParams as PromptRequest

CHOICES = (
    ("allow_once", "Allow once"),
    ("allow_session", "Allow for this session"),
    ("deny", "Deny"),
)
MAX_DIFF_CHARS = 20_000

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


def form_message(prompt: PromptRequest) -> str:
    lines = [prompt.title, prompt.summary, f"Risk: {prompt.risk}"]
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
    """The form's answer as a toolhost/approve answer."""
    if action == "decline":
        return {"decision": "deny", "reason": "the user declined in the MCP client"}
    if action != "accept" or not isinstance(content, dict):
        return {"decision": "deny", "reason": "the user dismissed the approval form"}
    decision = content.get("decision")
    reason = content.get("reason")
    if decision not in ("allow_once", "allow_session", "deny"):
        return {"decision": "deny", "reason": f"the form's answer {decision!r} is not a choice"}
    answer = {"decision": str(decision)}
    if isinstance(reason, str) and reason.strip():
        answer["reason"] = reason.strip()
    return answer


class ElicitationAsker:
    """The policy's asker for a local MCP runtime: the current call's elicitation form.
    `available()` is false when the call's client cannot be asked: then nobody is asked and
    the policy decides alone (permission.unattended)."""

    def available(self) -> bool:
        return CURRENT_ELICIT.get() is not None

    async def __call__(self, prompt: PromptRequest) -> dict[str, str]:
        elicit = CURRENT_ELICIT.get()
        if elicit is None:
            return {"decision": "deny", "reason": "the MCP client cannot be asked"}
        action, content = await elicit(form_message(prompt), FORM_SCHEMA)
        return answer_from(action, content)
