"""Passwords a command asks for go to the user, never to the model: the askpass broker.

A command that was allowed to run gets a grant: a token of its own and the variables that
point SSH_ASKPASS (forced), SUDO_ASKPASS, GIT_ASKPASS and a git credential helper at
askpass_helper.py. When the program asks, the helper brings the prompt here over a Unix
socket in a private folder (bound into the sandbox), with the token; the broker asks the
user through the grant's asker (the editor's `toolhost/secret`) and hands the answer back
to the helper, which prints it to the program. The answer is kept nowhere: not in a
result, a log or the audit line; `remember` makes the result's redaction replace it should
the program print it.

A token names one command: a command cannot ask in another's name, and the token is
revoked when its command ends. A grant without an asker (no client that shows the prompt)
refuses every question, and says so to the tool that ran the command (`Grant.refused`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import shlex
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal

import attrs

from lsp_server.home.private_folder import MAX_SOCKET_PATH, private_folder

log = logging.getLogger(__name__)

HELPER = Path(__file__).with_name("askpass_helper.py")
SOCKET_NAME = "askpass.sock"
KINDS = ("ssh", "sudo", "git")
"""The askpass programs: one small script each, so the prompt says who asks."""

# A confirmation of the secret just typed (ssh-keygen: "Enter same passphrase again:")
# is answered with it: the user types a new passphrase once.
_REPEAT = re.compile(r"\b(again|retype|re-enter|repeat|confirm|verify)\b", re.IGNORECASE)
_LINE_LIMIT = 64 * 1024

Refusal = Literal["cancelled", "unavailable", "unanswered"]


@attrs.frozen
class SecretQuestion:
    kind: str
    """ssh, sudo, git (askpass programs) or credential (git's credential helper)."""
    prompt: str
    """What the program asks, as it asked it."""
    username: str | None = None
    """A credential's user name when git knows it (from the URL)."""


@attrs.frozen(repr=False)
class SecretAnswer:
    secret: str | None = None
    username: str | None = None
    refused: Refusal | None = None

    def __repr__(self) -> str:  # never the secret, in a log line or a traceback
        return f"SecretAnswer(refused={self.refused!r})"


SecretAsker = Callable[[SecretQuestion], Awaitable[SecretAnswer]]


@attrs.define(eq=False)
class Grant:
    """One command's right to ask the user for secrets, while it runs."""

    token: str = attrs.field(repr=False)
    environment: dict[str, str] = attrs.field(repr=False)
    """The variables the command's environment gets (environment.py applies them)."""
    asker: SecretAsker | None
    remember: Callable[[str], None] | None = None
    refused: Refusal | None = None
    """The first question the user did not answer (or nobody could be asked)."""
    refused_prompt: str | None = None
    typed_empty: bool = False
    """A refused terminal prompt was given an empty line (the program went on without)."""
    asked: int = 0
    """Questions the user was asked."""
    _last: str | None = attrs.field(default=None, repr=False)
    _lock: asyncio.Lock = attrs.Factory(asyncio.Lock)
    _revoke: Callable[[str], None] | None = None

    async def answer(self, question: SecretQuestion) -> SecretAnswer:
        async with self._lock:
            if self.refused is not None:  # asked once; no second prompt after a cancel
                return SecretAnswer(refused=self.refused)
            if self._last is not None and _REPEAT.search(question.prompt):
                return SecretAnswer(secret=self._last)
            if self.asker is None:
                answer = SecretAnswer(refused="unavailable")
            else:
                self.asked += 1
                answer = await self.asker(question)
            if answer.secret is None:
                self.refused = answer.refused or "cancelled"
                self.refused_prompt = question.prompt
                return SecretAnswer(refused=self.refused)
            self._last = answer.secret
            if self.remember is not None:
                self.remember(answer.secret)
            return answer

    def close(self) -> None:
        """The command ended: its token asks no more."""
        self._last = None
        if self._revoke is not None:
            self._revoke(self.token)


def _shorter(folder: Path) -> Path:
    """`folder`, or one in /tmp/toolhost-<uid> when a socket there would be too long."""
    if len(os.fsencode(folder / SOCKET_NAME)) <= MAX_SOCKET_PATH:
        return folder
    return Path("/tmp") / f"toolhost-{os.getuid()}" / folder.name


class AskpassBroker:
    """One per runtime: its socket is opened on the first grant, on the loop that runs the
    commands, and closed (its folder removed) at shutdown."""

    def __init__(self, parent: Path) -> None:
        self.folder = _shorter(parent / f"askpass-{os.getpid()}-{secrets.token_hex(4)}")
        """Private (0700); the sandbox binds it in read-only (sandbox/service.py)."""
        self._grants: dict[str, Grant] = {}
        self._server: asyncio.AbstractServer | None = None
        self._opening = asyncio.Lock()

    @property
    def socket(self) -> Path:
        return self.folder / SOCKET_NAME

    async def grant(
        self, asker: SecretAsker | None, remember: Callable[[str], None] | None = None
    ) -> Grant:
        """A new grant; OSError when the socket cannot be made (the command then runs
        without one, as before: every password prompt fails at once)."""
        async with self._opening:
            if self._server is None:
                self._server = await self._open()
        token = secrets.token_urlsafe(32)
        grant = Grant(token, self._environment(token), asker, remember, revoke=self._revoke)
        self._grants[token] = grant
        return grant

    def _revoke(self, token: str) -> None:
        self._grants.pop(token, None)

    def _environment(self, token: str) -> dict[str, str]:
        env = {f"{kind.upper()}_ASKPASS": str(self.folder / f"askpass-{kind}") for kind in KINDS}
        env.update(
            SSH_ASKPASS_REQUIRE="force",
            TOOLHOST_ASKPASS_SOCKET=str(self.socket),
            TOOLHOST_ASKPASS_TOKEN=token,
            TOOLHOST_CREDENTIAL_HELPER=str(self.folder / "credential"),
        )
        return env

    async def _open(self) -> asyncio.AbstractServer:
        self._write_scripts()
        server = await asyncio.start_unix_server(self._serve, path=str(self.socket))
        self.socket.chmod(0o600)
        return server

    def _write_scripts(self) -> None:
        """The private folder, and in it the programs the variables name (a few bytes)."""
        private_folder(self.folder)
        python = shlex.quote(os.path.realpath(sys.executable))
        helper = shlex.quote(str(HELPER))
        for name, kind in [*((f"askpass-{k}", k) for k in KINDS), ("credential", "credential")]:
            script = self.folder / name
            script.write_text(f'#!/bin/sh\nexec {python} -I -S {helper} {kind} "$@"\n')
            script.chmod(0o700)
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            reply = await self._reply(line[:_LINE_LIMIT])
            writer.write(json.dumps(reply).encode("utf-8") + b"\n")
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            log.info("askpass: a helper's question could not be answered: %s", type(exc).__name__)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _reply(self, line: bytes) -> dict[str, object]:
        try:
            request = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            request = None
        if not isinstance(request, dict):
            return {"refused": "unavailable", "say": "toolhost could not read the question"}
        token = request.get("token")
        grant = self._grants.get(token) if isinstance(token, str) else None
        if grant is None:
            return {"refused": "unavailable", "say": "this command may not ask for a password"}
        prompt, kind, user = request.get("prompt"), request.get("kind"), request.get("username")
        question = SecretQuestion(
            kind=kind if isinstance(kind, str) and kind else "askpass",
            prompt=(prompt if isinstance(prompt, str) and prompt.strip() else "Password:")[:500],
            username=user if isinstance(user, str) and user else None,
        )
        answer = await grant.answer(question)
        if answer.secret is None:
            return {"refused": answer.refused, "say": _SAY[answer.refused or "cancelled"]}
        reply: dict[str, object] = {"secret": answer.secret}
        if answer.username:
            reply["username"] = answer.username
        return reply

    async def close(self) -> None:
        for grant in list(self._grants.values()):
            grant.close()
        if self._server is not None:
            self._server.close()
            self._server = None
        shutil.rmtree(self.folder, ignore_errors=True)


_SAY: dict[str, str] = {
    "cancelled": "the user cancelled the password prompt",
    "unavailable": (
        "no one can be asked for the password here; run the command in your own terminal"
    ),
    "unanswered": "the password prompt was not answered in time",
}
