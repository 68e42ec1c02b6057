"""`toolhost call` on a terminal: show the approval request on stderr, read the answer.

Used only when stdin is a TTY; otherwise the CLI follows `--yes` or the unattended decision.
Answers: `y` once, `s [N]` for the session, `a [N]` always (N picks one of the rules listed,
default 1), `n [reason]` deny. Each choice and each rule is written out in words. Anything
else (a typo, an empty line, a rule number that is not listed) asks again and says what is
accepted; only the end of input (the terminal closed) is a denial.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

import anyio

from lsp_server.policy.prompt import Answer, ApprovalAnswer
from lsp_server.policy.rules import RuleError, parse_rule
from lsp_server.protocol import ApproveParams

PROMPT = "Allow? [y/s/a/n]: "
PROMPT_ONCE = "Allow? [y/n]: "


def rule_in_words(text: str) -> str:
    """What a rule allows, for a person: `bash(git status)` -> "`git status` (this command
    exactly)", `Edit(src/**)` -> "every file edit under src/"."""
    try:
        rule = parse_rule(text)
    except RuleError:
        return f"calls matching {text}"
    if rule.words is not None:
        return f"`{' '.join(rule.words)}` (this command exactly)"
    if rule.prefix is not None:
        return f"every command that starts with `{' '.join(rule.prefix)}`"
    what = {
        "Read": "every read-only tool",
        "Edit": "every file edit",
        "Bash": "every shell command",
    }.get(rule.name, f"every {rule.name} call")
    if rule.spec is None:
        return what
    what = {"Read": "reads", "Edit": "file edits", "Bash": "commands"}.get(rule.name, rule.name)
    spec = rule.spec.removeprefix("/")  # an anchored pattern: relative to the workspace
    if spec.endswith("/**"):
        return f"{what} under {spec.removesuffix('/**')}/"
    return f"{what} of {spec}"


def render(request: ApproveParams) -> str:
    lines = [f"\n== {request.title}  (risk: {request.risk})", request.summary]
    lines += [f"   path: {path}" for path in request.paths]
    if request.diff:
        lines += ["", request.diff.rstrip("\n"), ""]
    rules = request.suggested_rules
    lines.append("What you can answer:")
    lines.append("   y           allow this call, this once")
    if rules:
        session = request.session
        first = rule_in_words(rules[0])
        lines += [
            f"   s           allow {first} for the rest of this session: this call and later",
            f"               `toolhost call --session {session}` in this workspace",
            f"   a           always allow {first} in this workspace (saved in .toolhost.toml)",
        ]
        if len(rules) > 1:
            lines.append("   s N, a N    the same with rule N of the list below instead of rule 1")
    lines.append("   n [reason]  refuse it; a reason, if you type one, goes into the result")
    if len(rules) > 1:
        lines.append("Rules s and a can remember:")
        for number, rule in enumerate(rules, start=1):
            lines.append(f"   rule {number}: {rule_in_words(rule)}   [{rule}]")
    elif rules:
        lines.append(f"   (the rule remembered: {rules[0]})")
    else:
        lines.append("No rule can remember this call: it can only be allowed once, or refused.")
    return "\n".join(lines) + "\n"


def parse_answer(text: str, suggestions: tuple[str, ...]) -> ApprovalAnswer | str:
    """The answer, or (a str) why the line is not one: the prompt asks again with it."""
    text = text.strip()
    accepted = "y or n" if not suggestions else "y, s, a or n"
    if not text:
        return f"please type {accepted}"
    head, _, rest = text.partition(" ")
    choice = head[0].lower()
    if choice == "y" and head.lower() in ("y", "yes"):
        return ApprovalAnswer("allow_once")
    if choice == "n" and head.lower() in ("n", "no"):
        return ApprovalAnswer("deny", reason=rest.strip() or None)
    if choice in ("s", "a") and suggestions:
        number_text = (head[1:] or rest).strip()
        if number_text and not number_text.isdigit():
            return f"{text!r} is not an answer: after {choice} type a rule number, or nothing"
        number = int(number_text) if number_text else 1
        if not 1 <= number <= len(suggestions):
            listed = "1" if len(suggestions) == 1 else f"1 to {len(suggestions)}"
            return f"there is no rule {number}: the rules are numbered {listed}"
        decision: Answer = "allow_session" if choice == "s" else "allow_always"
        return ApprovalAnswer(decision, rule=suggestions[number - 1])
    if choice in ("s", "a"):
        return f"this call cannot be remembered: type {accepted}"
    return f"{text!r} is not an answer: type {accepted}"


class TerminalAsker:
    """An Asker (see prompt.py) that talks to a person on a terminal."""

    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        self.stdin = stdin
        self.out = out
        self.asked: list[tuple[ApproveParams, ApprovalAnswer]] = []
        """Every request shown and what the person answered, for the CLI's own words."""
        # One prompt at a time: concurrent calls queue for the one keyboard.
        self._lock = anyio.Lock()

    def _prompt(self, request: ApproveParams) -> ApprovalAnswer:
        rules = tuple(request.suggested_rules)
        self.out.write(render(request))
        answer = _read_until_answered(self.stdin.readline, self.out, rules)
        self.asked.append((request, answer))
        return answer

    async def __call__(self, request: ApproveParams) -> dict[str, str]:
        async with self._lock:
            answer = await anyio.to_thread.run_sync(self._prompt, request, abandon_on_cancel=True)
        result: dict[str, str] = {"decision": answer.decision}
        if answer.rule:
            result["rule"] = answer.rule
        if answer.reason:
            result["reason"] = answer.reason
        return result


def _read_until_answered(
    readline: Callable[[], str], out: TextIO, rules: tuple[str, ...]
) -> ApprovalAnswer:
    while True:
        out.write(PROMPT if rules else PROMPT_ONCE)
        out.flush()
        line = readline()
        if not line:  # end of input: nobody is there to answer
            out.write("\n")
            return ApprovalAnswer("deny", reason="no answer on the terminal")
        parsed = parse_answer(line, rules)
        if isinstance(parsed, ApprovalAnswer):
            return parsed
        out.write(f"   {parsed}\n")


async def allow_everything(request: ApproveParams) -> dict[str, str]:
    """`toolhost call --yes`: every "ask" is answered allow_once (deny rules still win)."""
    return {"decision": "allow_once"}
