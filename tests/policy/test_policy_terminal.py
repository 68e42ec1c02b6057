"""The terminal prompt of `toolhost call`, driven through real text streams."""

from __future__ import annotations

import io

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
    assert parse_answer("y\n", SUGGESTIONS).decision == "allow_once"
    assert parse_answer("s", SUGGESTIONS).rule == "bash(npm test)"
    assert parse_answer("a 2", SUGGESTIONS).rule == "bash(npm:*)"
    assert parse_answer("a2", SUGGESTIONS).decision == "allow_always"
    denied = parse_answer("n not now", SUGGESTIONS)
    assert (denied.decision, denied.reason) == ("deny", "not now")
    assert parse_answer("", SUGGESTIONS).decision == "deny"
    assert parse_answer("s 9", SUGGESTIONS).decision == "deny"
    assert parse_answer("maybe", SUGGESTIONS).decision == "deny"


async def test_prompt_shows_the_request_and_reads_a_line() -> None:
    out = io.StringIO()
    asker = TerminalAsker(io.StringIO("s 2\n"), out)
    assert await asker(request()) == {"decision": "allow_session", "rule": "bash(npm:*)"}
    shown = out.getvalue()
    assert "Run: npm test" in shown and "rule 2: bash(npm:*)" in shown and "risk: medium" in shown
