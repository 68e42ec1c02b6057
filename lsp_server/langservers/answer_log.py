"""Who answered the lsp_* questions, per language: the editor's own servers or toolhost's.
Shown by toolhost/status (and so by the editors' status views)."""

from __future__ import annotations

import time
from typing import Any

import attrs


@attrs.define
class LspAnswerLog:
    by_language: dict[str, dict[str, Any]] = attrs.Factory(dict)

    def record(self, language: str, answered_by: str, server: str) -> None:
        self.by_language[language] = {
            "answeredBy": answered_by,
            "server": server,
            "at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime()),
        }

    def status(self, provider: str, editor_answers: bool) -> dict[str, Any]:
        """`provider` is lsp.provider; `editor_answers`: the client declared lspProxy."""
        if provider == "spawn" or not editor_answers:
            policy = "toolhost's own language servers answer"
        elif provider == "editor":
            policy = "only the editor's language servers answer"
        else:
            policy = "the editor's language servers answer first, toolhost's when it has none"
        return {
            "provider": provider,
            "editorAnswers": editor_answers and provider != "spawn",
            "summary": policy,
            "languages": dict(sorted(self.by_language.items())),
        }
