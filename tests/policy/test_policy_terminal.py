"""The terminal prompt of `toolhost call`, driven through real text streams."""

from __future__ import annotations

import io

from lsp_server.policy.prompt import ApprovalAnswer
from lsp_server.policy.tty_prompt import TerminalAsker, parse_answer
from lsp_server.protocol import ApproveParams

SUGGESTIONS = ("bash(npm test)", "bash(npm:*)")


def request() -> ApproveParams:
    return ApproveParams(
        call_id="c-1",
        session="default",
        tool="bash",
        read_only=False,
        title="Run: npm test",
        summary="Run the tests.",
        arguments={"command": "npm test"},
        paths=(),
        diff=None,
        risk="medium",
        suggested_rules=SUGGESTIONS,
    )


def test_answers() -> None:
    def answer(text: str) -> ApprovalAnswer:
        parsed = parse_answer(text, SUGGESTIONS)
        assert isinstance(parsed, ApprovalAnswer), parsed
        return parsed

    assert answer("y\n").decision == "allow_once"
    assert answer("s").rule == "bash(npm test)"
    assert answer("a 2").rule == "bash(npm:*)"
    assert answer("a2").decision == "allow_always"
    denied = answer("n not now")
    assert (denied.decision, denied.reason) == ("deny", "not now")


def test_a_typo_is_no_answer_and_says_what_is_accepted() -> None:
    assert parse_answer("", SUGGESTIONS) == "please type y, s, a or n"
    assert parse_answer("s 9", SUGGESTIONS) == "there is no rule 9: the rules are numbered 1 to 2"
    assert parse_answer("maybe", SUGGESTIONS) == "'maybe' is not an answer: type y, s, a or n"
    assert parse_answer("nope", SUGGESTIONS) == "'nope' is not an answer: type y, s, a or n"
    assert parse_answer("s", ()) == "this call cannot be remembered: type y or n"


async def test_a_typo_asks_again_and_only_the_end_of_input_denies() -> None:
    out = io.StringIO()
    asker = TerminalAsker(io.StringIO("x\ns 7\ny\n"), out)
    assert await asker(request()) == {"decision": "allow_once"}
    shown = out.getvalue()
    assert shown.count("Allow? [y/s/a/n]") == 3
    assert "'x' is not an answer: type y, s, a or n" in shown
    gone = TerminalAsker(io.StringIO("x\n"), io.StringIO())
    assert (await gone(request()))["decision"] == "deny"


async def test_prompt_shows_the_request_and_reads_a_line() -> None:
    out = io.StringIO()
    asker = TerminalAsker(io.StringIO("s 2\n"), out)
    assert await asker(request()) == {"decision": "allow_session", "rule": "bash(npm:*)"}
    shown = out.getvalue()
    assert "Run: npm test" in shown and "risk: medium" in shown
    assert "rule 2: every command that starts with `npm`   [bash(npm:*)]" in shown
    assert (
        "   a           always allow `npm test` (this command exactly) in this workspace" in shown
    )
