"""A command's password prompt goes to the user, never to the model: a real `toolhost
serve`, a pytest-lsp client playing the editor (it declares `secrets` and answers
toolhost/secret as a user typing into a hidden input), real git against a loopback
smart-HTTP server with basic auth, and real ssh-keygen. The password is then looked for in
every result, notification, log line and file of the state folder (audit log, stored
results, checkpoint objects): it is in none of them."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.askpass.git_http import PASSWORD, USER, files_holding, git_http_server
from tests.fake_editor import FakeEditor
from tests.helpers import lsp_call, lsp_session, text_of

pytestmark = pytest.mark.slow

SecretScript = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
NETWORK = {"shell": {"sandbox_network": True}}
"""Sandboxed commands reach the host's loopback (the git server)."""


class SecretEditor(FakeEditor):
    """The fake editor, plus the user at toolhost/secret's hidden input."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        super().__init__()
        self.answers = list(answers)
        self.secret_prompts: list[dict[str, Any]] = []
        self.seen: list[Any] = []
        """Everything the server sent the client but the secret answers themselves."""

    def factory(self) -> LanguageClient:
        client = super().factory()

        @client.feature("toolhost/secret")
        async def secret(params: dict[str, Any]) -> dict[str, Any]:
            self.secret_prompts.append(params)
            return self.answers.pop(0) if self.answers else {"cancelled": True}

        @client.feature("window/logMessage")
        def log_message(params: Any) -> None:
            self.seen.append(getattr(params, "message", params))

        return client


def secret_session(
    root: Path, editor: SecretEditor, state: Path, secrets: bool = True, **options: Any
) -> Any:
    experimental = {"approvals": True, "secrets": secrets}
    return lsp_session(
        root,
        {**NETWORK, **options},
        experimental=experimental,
        state_dir=state,
        client_factory=editor.factory,
    )


def assert_nowhere(secret: str, state: Path, *texts: Any) -> None:
    for text in texts:
        assert secret not in json.dumps(text, default=str), text
    assert files_holding(state, secret) == []


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


async def test_git_clone_asks_the_editor_once_and_the_password_stays_out(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLHOST_LOG", "debug")
    state = tmp_path / "state"
    editor = SecretEditor([{"secret": PASSWORD, "username": USER}])
    with git_http_server(tmp_path / "srv") as server:
        async with secret_session(root, editor, state) as client:
            result = await lsp_call(client, "bash", {"command": f"git clone {server.url}"})
            status = await client.protocol.send_request_async("toolhost/status", {})
    assert not result["isError"], text_of(result)
    assert (root / "repo" / "README.md").read_text() == "served over smart HTTP\n"
    assert (root / "repo" / ".git" / "HEAD").is_file(), text_of(result)  # a usable clone
    assert "renamed" not in text_of(result), text_of(result)
    [asked] = editor.secret_prompts
    assert asked["kind"] == "credential" and asked["username"] is None
    assert asked["command"] == f"git clone {server.url}"
    assert asked["session"] == "default" and asked["callId"] == result["callId"]
    assert "127.0.0.1" in asked["prompt"]
    assert any(r.endswith(" auth") for r in server.requests)
    assert len(editor.prompts) == 1  # the approval came first (a clone writes and fetches)
    seen = [result, status, editor.seen, editor.prompts, client.did_calls]
    assert_nowhere(PASSWORD, state, *seen)
    assert files_holding(root, PASSWORD) == []  # not in the clone's .git/config either
    logged = capfd.readouterr()  # the server's stderr, at TOOLHOST_LOG=debug
    assert "attach: listening" in logged.err and PASSWORD not in logged.err + logged.out


async def test_a_cancelled_prompt_fails_the_command_saying_so(root: Path, tmp_path: Path) -> None:
    editor = SecretEditor([{"cancelled": True}])
    with git_http_server(tmp_path / "srv") as server:
        async with secret_session(root, editor, tmp_path / "state") as client:
            result = await lsp_call(client, "bash", {"command": f"git clone {server.url}"})
    assert result["isError"]
    assert result["error"]["code"] == "shell.secret_cancelled"
    assert "the user cancelled it" in text_of(result)
    assert len(editor.secret_prompts) == 1  # git asks no one else after the cancel
    assert not (root / "repo" / "README.md").exists()


async def test_without_a_client_that_asks_the_refusal_says_to_use_a_terminal(
    root: Path, tmp_path: Path
) -> None:
    editor = SecretEditor([])
    with git_http_server(tmp_path / "srv") as server:
        async with secret_session(root, editor, tmp_path / "state", secrets=False) as client:
            command = f"git clone {server.url}"
            result = await lsp_call(client, "bash", {"command": command})
    assert result["isError"]
    error = result["error"]
    assert error["code"] == "shell.secret_unavailable"
    assert f"run it in their own terminal: {command}" in error["recovery"]
    assert editor.secret_prompts == []


async def test_a_denied_command_never_asks_for_a_secret(root: Path, tmp_path: Path) -> None:
    editor = SecretEditor([{"secret": PASSWORD, "username": USER}])
    editor.script = editor.answer({"decision": "deny"})
    with git_http_server(tmp_path / "srv") as server:
        async with secret_session(root, editor, tmp_path / "state") as client:
            arguments = {"command": f"git clone {server.url}", "sandbox": "off"}
            result = await lsp_call(client, "bash", arguments)
    assert result["isError"] and result["error"]["code"] == "permission.user_denied"
    assert len(editor.prompts) == 1  # the approval was asked, and denied
    assert editor.secret_prompts == []
    assert server.requests == []


def make_key(folder: Path, passphrase: str) -> Path:
    key = folder / "key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", "test", "-f", str(key)],
        check=True,
    )
    return key


def key_opens(key: Path, passphrase: str) -> bool:
    done = subprocess.run(
        ["ssh-keygen", "-y", "-P", passphrase, "-f", str(key)], capture_output=True
    )
    return done.returncode == 0


async def test_ssh_keygen_changes_a_passphrase_through_two_prompts(
    root: Path, tmp_path: Path
) -> None:
    old, new = "old-passphrase-4410", "new-passphrase-9921"
    key = make_key(root, old)
    editor = SecretEditor([{"secret": old}, {"secret": new}])
    state = tmp_path / "state"
    async with secret_session(root, editor, state) as client:
        result = await lsp_call(client, "bash", {"command": "ssh-keygen -p -f key"})
    assert not result["isError"], text_of(result)
    assert [p["kind"] for p in editor.secret_prompts] == ["ssh", "ssh"]
    prompts = [p["prompt"] for p in editor.secret_prompts]
    assert "old passphrase" in prompts[0] and "new passphrase" in prompts[1], prompts
    assert key_opens(key, new) and not key_opens(key, old)
    for secret in (old, new):
        assert_nowhere(secret, state, result, editor.seen, client.did_calls)
    assert os.access(key, os.R_OK)


async def test_a_typed_secret_never_reaches_an_approval_or_an_mcp_form(
    root: Path, tmp_path: Path
) -> None:
    """A command that prints what the user typed (it runs the askpass helper itself) shows
    the model a placeholder; the model copies it into commands that ask, from the editor
    and from an attached MCP client that asks for forms: every approval shows the
    placeholder, never the secret (an attached call is approved in the editor)."""
    from mcp import types

    from tests.mcp.clients import mcp_session

    forms: list[types.ElicitRequestParams] = []

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        forms.append(params)
        return types.ElicitResult(action="accept", content={"decision": "allow_once"})

    editor = SecretEditor([{"secret": PASSWORD}])
    state = tmp_path / "state"
    async with secret_session(root, editor, state) as client:
        shown = await lsp_call(client, "bash", {"command": 'echo "got $("$SSH_ASKPASS" Token:)"'})
        seen = text_of(shown).splitlines()[0]
        assert seen == "got ‹secret:typed by the user›", seen
        copied = {"command": f"echo '{seen}' > approved.txt", "sandbox": "off"}
        await lsp_call(client, "bash", copied)
        options = ("--attach", "require", "--approvals", "client")
        async with mcp_session(root, *options, elicitation_callback=person) as session:
            formed = {"command": f"echo '{seen}' > formed.txt", "sandbox": "off"}
            by_form = await session.call_tool("bash", formed)
    assert len(editor.secret_prompts) == 1 and len(editor.prompts) == 2
    for prompt in editor.prompts:
        assert "‹secret:typed by the user›" in prompt["arguments"]["command"]
    assert by_form.is_error is False
    assert_nowhere(PASSWORD, state, shown, editor.prompts, [f.model_dump() for f in forms])


async def test_a_terminal_password_prompt_asks_the_editor(root: Path, tmp_path: Path) -> None:
    """A program that reads a password from its terminal with echo off (`read -s`), not
    through an askpass program: the editor is asked the same way; cancelled, the program
    is interrupted and the result says the user cancelled."""
    secret = "terminal-typed-5150"
    editor = SecretEditor([{"secret": secret}, {"cancelled": True}])
    state = tmp_path / "state"
    reader = 'read -r -s -p "DB password: " p; echo; echo "length ${#p}"'
    async with secret_session(root, editor, state) as client:
        answered = await lsp_call(client, "bash", {"command": reader})
        cancelled = await lsp_call(client, "bash", {"command": reader})
    assert not answered["isError"], text_of(answered)
    assert f"length {len(secret)}" in text_of(answered)
    assert [p["kind"] for p in editor.secret_prompts] == ["terminal", "terminal"]
    assert editor.secret_prompts[0]["prompt"] == "DB password:"
    assert cancelled["isError"], text_of(cancelled)
    assert cancelled["error"]["code"] == "shell.secret_cancelled"
    assert_nowhere(secret, state, answered, editor.seen, client.did_calls)


async def test_a_password_prompt_after_job_input_asks_the_editor(
    root: Path, tmp_path: Path
) -> None:
    """A command that first waits for a name (a job the model answers with job_input), then
    for a password with echo off: the password goes from the editor to the program, and
    neither the model's results nor the state hold it."""
    secret = "job-typed-2718"
    editor = SecretEditor([{"secret": secret}])
    state = tmp_path / "state"
    reader = 'read -r -p "Name: " n; read -r -s -p "Password: " p; echo; echo "$n ${#p}"'
    async with secret_session(root, editor, state) as client:
        waiting = await lsp_call(client, "bash", {"command": reader})
        shown = text_of(waiting)
        found = re.search(r'job_input \{"job_id": "(bash-\d+)"', shown)
        assert found is not None, shown
        typed = await lsp_call(
            client, "job_input", {"job_id": found.group(1), "text": "Ada\n", "wait_ms": 10000}
        )
    assert [p["kind"] for p in editor.secret_prompts] == ["terminal"]
    assert editor.secret_prompts[0]["prompt"] == "Password:"
    assert f"Ada {len(secret)}" in text_of(typed), text_of(typed)
    assert_nowhere(secret, state, waiting, typed, editor.seen, client.did_calls)
