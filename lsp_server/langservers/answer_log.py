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


def render_answers(
    languages: list[str], provider: str, editor: str | None, answers: dict[str, Any] | None
) -> str:
    """`toolhost doctor`'s section: per language, who answers lsp_* questions. `editor` names
    the editor whose toolhost runs for the folder (None: none runs); `answers` is that
    runtime's lspAnswers status."""
    lines = [f"Who answers lsp_* questions (lsp.provider = {provider}):"]
    if provider == "spawn":
        lines.append("  every language: toolhost's own language server (above)")
        return "\n".join(lines)
    if editor is None or answers is None:
        lines += [
            "  no editor's toolhost runs for this folder: `toolhost call` and an unattached",
            "  `toolhost mcp` use toolhost's own servers (above). With VS Code, Neovim or Emacs",
            "  (eglot) open here, the editor's language servers answer first.",
        ]
        return "\n".join(lines)
    if not answers.get("editorAnswers"):
        lines.append(f"  {editor} does not answer lsp_* questions: toolhost's own servers do")
        return "\n".join(lines)
    asked: dict[str, Any] = answers.get("languages") or {}
    fallback = "nothing (lsp.provider = editor)" if provider == "editor" else "toolhost's server"
    for language in sorted(set(languages) | set(asked)):
        last = asked.get(language)
        if last is None:
            lines.append(f"  {language:<11} not asked yet: {editor} first, then {fallback}")
        elif last.get("answeredBy") == "editor":
            lines.append(f"  {language:<11} {editor}: the editor's {last.get('server')}")
        else:
            lines.append(
                f"  {language:<11} toolhost's {last.get('server')} ({editor} had no answer)"
            )
    return "\n".join(lines)
