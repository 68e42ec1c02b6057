"""The editor's answer to `toolhost/approve`, read: an answer that cannot be read is a
denial at once (and a warning for the editor's developer), never a wait; a call that may not
run is a PolicyRefusal."""

from __future__ import annotations

import logging
from typing import Any

from lsp_server.core.client import UnreadableAnswer
from lsp_server.core.errors import PERMISSION_UNREADABLE_ANSWER
from lsp_server.policy.prompt import ApprovalAnswer

log = logging.getLogger(__name__)


class PolicyRefusal(Exception):
    """The call may not run. `reason` completes "<tool> was not allowed: ..."."""

    def __init__(self, code: str, reason: str, rule: str | None = None) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.rule = rule


def unreadable_refusal(answer: UnreadableAnswer) -> PolicyRefusal:
    """What the model reads: who could not be read and what it sent (bounded, escaped)."""
    return PolicyRefusal(
        PERMISSION_UNREADABLE_ANSWER,
        f"{answer.peer} gave an answer toolhost cannot read (it sent {answer.sent}), "
        "which counts as a denial; nothing ran",
    )


def read_answer(result: Any) -> ApprovalAnswer:
    """The asker's answer; one that cannot be read is a denial (and a warning for the
    editor's developer), never a wait."""
    try:
        return ApprovalAnswer.from_result(result)
    except ValueError as exc:
        unreadable = UnreadableAnswer.of(result, str(exc))
        log.warning(
            "the editor's answer to toolhost/approve cannot be read: %s; it sent %s; expected "
            '{"decision": "allow_once" | "allow_session" | "allow_always" | "deny", ...}',
            unreadable.problem,
            unreadable.sent,
        )
        raise unreadable_refusal(unreadable) from exc
