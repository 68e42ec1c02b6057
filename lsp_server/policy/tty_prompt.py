"""`toolhost call` on a terminal: show the approval request on stderr, read the answer.

Used only when stdin is a TTY; otherwise the CLI follows `--yes` or the unattended decision.
Answers: `y` once, `s[N]` for the session, `a[N]` always (N picks a suggested rule, default
1), `n [reason]` deny. Anything else, or end of input, is a deny.
"""

from __future__ import annotations

from typing import TextIO

import anyio

from lsp_server.policy.prompt import Answer, ApprovalAnswer
from lsp_server.protocol import ApproveParams

PROMPT = "Allow? [y] once  [s N] session  [a N] always  [n reason] deny: "


def render(request: ApproveParams) -> str:
    lines = [f"\n== {request.title}  (risk: {request.risk})", request.summary]
    lines += [f"   path: {path}" for path in request.paths]
    if request.diff:
        lines += ["", request.diff.rstrip("\n"), ""]
    for number, rule in enumerate(request.suggested_rules, start=1):
        lines.append(f"   rule {number}: {rule}")
    return "\n".join(lines) + "\n"


def parse_answer(text: str, suggestions: tuple[str, ...]) -> ApprovalAnswer:
    text = text.strip()
    if not text:
        return ApprovalAnswer("deny", reason="no answer on the terminal")
    head, _, rest = text.partition(" ")
    choice = head[0].lower()
    if choice == "y":
        return ApprovalAnswer("allow_once")
    if choice == "n":
        return ApprovalAnswer("deny", reason=rest.strip() or None)
    if choice in ("s", "a"):
        number_text = (head[1:] or rest).strip()
        number = int(number_text) if number_text.isdigit() else 1
        if not 1 <= number <= len(suggestions):
            return ApprovalAnswer("deny", reason=f"no suggested rule number {number}")
        decision: Answer = "allow_session" if choice == "s" else "allow_always"
        return ApprovalAnswer(decision, rule=suggestions[number - 1])
    return ApprovalAnswer("deny", reason=f"unrecognised answer {text!r}")


class TerminalAsker:
    """An Asker (see prompt.py) that talks to a person on a terminal."""

    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        self.stdin = stdin
        self.out = out
        # One prompt at a time: concurrent calls queue for the one keyboard.
        self._lock = anyio.Lock()

    def _prompt(self, request: ApproveParams) -> ApprovalAnswer:
        self.out.write(render(request) + PROMPT)
        self.out.flush()
        line = self.stdin.readline()
        return parse_answer(line, tuple(request.suggested_rules))

    async def __call__(self, request: ApproveParams) -> dict[str, str]:
        async with self._lock:
            answer = await anyio.to_thread.run_sync(self._prompt, request, abandon_on_cancel=True)
        result: dict[str, str] = {"decision": answer.decision}
        if answer.rule:
            result["rule"] = answer.rule
        if answer.reason:
            result["reason"] = answer.reason
        return result


async def allow_everything(request: ApproveParams) -> dict[str, str]:
    """`toolhost call --yes`: every "ask" is answered allow_once (deny rules still win)."""
    return {"decision": "allow_once"}
