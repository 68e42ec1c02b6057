"""A shell command's password prompts, asked of the user: the grant the bash tool opens
around a command it runs (secrets/askpass.py), the asker that sends `toolhost/secret` to
the editor that declared `secrets`, and the refusal the model reads when the user
cancelled or nobody could be asked.

The tool runs only after the call was allowed (by a rule or by the user), so a command
the user denied never reaches the prompt. What the user types goes to the program alone:
it is in no result (and redacted from them should the program print it), no log line, no
audit line.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from lsp_server.core import errors
from lsp_server.core.client import ClientRequestError
from lsp_server.core.errors import ToolError
from lsp_server.protocol import TOOLHOST_SECRET, SecretParams
from lsp_server.runtime.context import ToolContext
from lsp_server.secrets.askpass import (
    AskpassBroker,
    Grant,
    SecretAnswer,
    SecretAsker,
    SecretQuestion,
)
from lsp_server.secrets.known import SecretValues
from lsp_server.shell.prompts import PasswordAsker, PasswordRequest

log = logging.getLogger(__name__)


async def open_grant(ctx: ToolContext, command: str, timeout_ms: int) -> Grant | None:
    """The command's grant (None: the runtime has no broker, or its socket cannot be made;
    the command then runs as before, where every password prompt fails at once)."""
    try:
        broker = ctx.services.get(AskpassBroker)
    except LookupError:
        return None
    asker = editor_asker(ctx, command, timeout_ms / 1000) if ctx.client.features.secrets else None
    try:
        secrets = ctx.services.get(SecretValues)
    except LookupError:
        secrets = None
    try:
        return await broker.grant(asker, secrets.remember_typed if secrets else None)
    except OSError as exc:
        log.warning("password prompts are off for this command: %s", exc)
        return None


def editor_asker(ctx: ToolContext, command: str, timeout: float) -> SecretAsker:
    """Asks the editor of the call's runtime (an attached MCP call's too: its runtime is the
    editor's) with `toolhost/secret`."""

    async def ask(question: SecretQuestion) -> SecretAnswer:
        params = SecretParams(
            prompt=question.prompt,
            kind=_kind(question.kind),
            session=ctx.session.id,
            call_id=ctx.call_id,
            command=command,
            username=question.username,
        )
        try:
            result = await ctx.client.request(TOOLHOST_SECRET, params, timeout)
        except TimeoutError:
            return SecretAnswer(refused="unanswered")
        except ClientRequestError:
            return SecretAnswer(refused="cancelled")
        return read_answer(result)

    return ask


def terminal_password_prompt(grant: Grant | None) -> Callable[[str], Awaitable[str | None]] | None:
    """The hook a command in a terminal calls when it waits at a prompt with echo off (a
    password prompt read from the terminal itself, not through an askpass program): the
    user is asked the same way. Cancelled or nobody to ask: the program gets an empty line
    (the command has no controlling terminal to interrupt), and the result says why
    (`refusal`), whatever its exit code; the prompt never goes to the model to answer."""
    if grant is None:
        return None

    async def answer(screen: str) -> str | None:
        lines = [line.strip() for line in screen.splitlines() if line.strip()]
        prompt = lines[-1][-200:] if lines else "Password:"
        got = await grant.answer(SecretQuestion("terminal", prompt))
        if got.secret is not None:
            return got.secret
        grant.typed_empty = True
        return ""

    return answer


def job_password_asker(ctx: ToolContext, timeout: float) -> PasswordAsker | None:
    """The asker of a password prompt a job shows after `job_input` typed into it (echo
    off): the editor that declared `secrets`, as for a foreground command; what the user
    types is remembered, to be redacted should the program print it. None without such an
    editor: the prompt then reaches the model as any other, which cannot answer it."""
    if not ctx.client.features.secrets:
        return None
    try:
        secrets: SecretValues | None = ctx.services.get(SecretValues)
    except LookupError:
        secrets = None

    async def ask(request: PasswordRequest) -> str | None:
        question = SecretQuestion("terminal", request.prompt.strip()[-200:] or "Password:")
        answer = await editor_asker(ctx, request.command, timeout)(question)
        if answer.secret is not None and secrets is not None:
            secrets.remember_typed(answer.secret)
        return answer.secret

    return ask


def _kind(kind: str) -> Any:
    known = ("ssh", "sudo", "git", "credential", "terminal")
    return kind if kind in known else "askpass"


def read_answer(result: Any) -> SecretAnswer:
    """The editor's answer (typed, a namedtuple or plain JSON); anything without a secret
    string counts as cancelled. Never logged."""
    if attrs.has(type(result)):
        result = attrs.asdict(result)
    elif hasattr(result, "_asdict"):
        result = result._asdict()
    if not isinstance(result, Mapping) or result.get("cancelled") is True:
        return SecretAnswer(refused="cancelled")
    secret, username = result.get("secret"), result.get("username")
    if not isinstance(secret, str) or "\x00" in secret:
        return SecretAnswer(refused="cancelled")
    name = username if isinstance(username, str) and username and "\n" not in username else None
    return SecretAnswer(secret=secret, username=name)


def refusal(
    grant: Grant | None, command: str, text: str, exit_code: int | None
) -> ToolError | None:
    """The error for a command that failed because its password prompt was not answered
    (or went on after an empty line at a terminal prompt)."""
    if grant is None or grant.refused is None:
        return None
    if exit_code == 0 and not grant.typed_empty:
        return None
    asked = f"the command asked `{grant.refused_prompt}`"
    if grant.refused == "unavailable":
        return ToolError(
            errors.SHELL_SECRET_UNAVAILABLE,
            f"{asked} and nobody can be asked for a password here: the client does not show "
            "toolhost's password prompt (toolhost/secret), and a password never goes to the "
            "model",
            f"ask the user to run it in their own terminal: {command}",
            partial_text=text,
        )
    why = "cancelled it" if grant.refused == "cancelled" else "did not answer it in time"
    return ToolError(
        errors.SHELL_SECRET_CANCELLED,
        f"{asked}; the user {why}, so the program got no password",
        "do not retry it or work around the prompt: ask the user how to go on (they may "
        "run it again and answer, or run it in their own terminal)",
        partial_text=text,
    )
