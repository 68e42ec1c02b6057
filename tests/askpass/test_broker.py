"""The askpass broker and its helper, without an editor: the asker is a stand-in (a plain
function recording the questions), the helper a real subprocess talking over the real
socket. A token asks only for its own command, and only while it runs."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from lsp_server.secrets.askpass import HELPER, AskpassBroker, SecretAnswer, SecretQuestion
from lsp_server.tools._support.secret_grant import refusal, terminal_password_prompt


class Asker:
    """Stands in for the editor's toolhost/secret: answers from a list, records questions."""

    def __init__(self, *answers: SecretAnswer) -> None:
        self.answers = list(answers)
        self.questions: list[SecretQuestion] = []

    async def __call__(self, question: SecretQuestion) -> SecretAnswer:
        self.questions.append(question)
        return self.answers.pop(0) if self.answers else SecretAnswer(refused="cancelled")


async def helper(env: dict[str, str], *args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        "-S",
        str(HELPER),
        *args,
        env={"PATH": os.environ["PATH"], **env},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate(stdin)
    return process.returncode or 0, out.decode(), err.decode()


async def test_a_token_asks_for_its_own_command_only_while_it_runs(tmp_path: Path) -> None:
    broker = AskpassBroker(tmp_path)
    mine, other = Asker(SecretAnswer(secret="pass-for-mine")), Asker()
    grant = await broker.grant(mine)
    second = await broker.grant(other)
    try:
        code, out, _ = await helper(grant.environment, "ssh", "Enter passphrase:")
        assert (code, out) == (0, "pass-for-mine\n")
        assert mine.questions == [SecretQuestion("ssh", "Enter passphrase:")]
        forged = {**second.environment, "TOOLHOST_ASKPASS_TOKEN": "not-a-token"}
        code, out, err = await helper(forged, "sudo", "[sudo] password:")
        assert (code, out) == (1, "") and "may not ask" in err
        grant.close()  # the command ended
        code, out, _ = await helper(grant.environment, "ssh", "Enter passphrase:")
        assert (code, out) == (1, "")
        assert len(mine.questions) == 1 and other.questions == []
        assert (broker.folder.stat().st_mode & 0o777) == 0o700
    finally:
        await broker.close()
    assert not broker.folder.exists()


async def test_git_credentials_cancel_once_and_quit(tmp_path: Path) -> None:
    broker = AskpassBroker(tmp_path)
    asker = Asker(SecretAnswer(refused="cancelled"))
    grant = await broker.grant(asker)
    try:
        request = b"protocol=http\nhost=127.0.0.1:9\npath=repo.git\n\n"
        code, out, err = await helper(grant.environment, "credential", "get", stdin=request)
        assert (code, out) == (0, "quit=1\n") and "cancelled" in err
        code, out, _ = await helper(grant.environment, "git", "Username:")
        assert code == 1 and len(asker.questions) == 1  # not asked again
        assert grant.refused == "cancelled"
        assert asker.questions[0].prompt == "Password for http://127.0.0.1:9/repo.git"
    finally:
        await broker.close()


async def test_a_confirmation_takes_the_secret_just_typed(tmp_path: Path) -> None:
    broker = AskpassBroker(tmp_path)
    asker = Asker(SecretAnswer(secret="new-passphrase-1"))
    grant = await broker.grant(asker)
    try:
        first = await grant.answer(SecretQuestion("ssh", "Enter new passphrase:"))
        again = await grant.answer(SecretQuestion("ssh", "Enter same passphrase again:"))
        assert first.secret == again.secret == "new-passphrase-1"
        assert len(asker.questions) == 1
        assert "new-passphrase-1" not in repr(first) + repr(grant)
    finally:
        await broker.close()


async def test_a_terminal_password_prompt_is_asked_or_refused(tmp_path: Path) -> None:
    broker = AskpassBroker(tmp_path)
    answered = await broker.grant(Asker(SecretAnswer(secret="typed-in-editor")))
    headless = await broker.grant(None)
    try:
        hook = terminal_password_prompt(answered)
        assert hook is not None
        assert await hook("$ psql -W\nPassword for user ada: ") == "typed-in-editor"
        nobody = terminal_password_prompt(headless)
        assert nobody is not None
        assert await nobody("Password: ") == ""  # an empty line: the program goes on
        assert headless.refused == "unavailable" and headless.refused_prompt == "Password:"
        error = refusal(headless, "psql -W", "output", exit_code=0)
        assert error is not None and error.code == "shell.secret_unavailable"
        assert refusal(answered, "psql -W", "output", exit_code=1) is None
    finally:
        await broker.close()
