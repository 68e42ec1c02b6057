"""PolicyService decisions and answers. The `ask` functions here are stand-ins for the
editor (named stubs); the end-to-end tests use a real pytest-lsp client instead."""

from __future__ import annotations

import tomllib
from pathlib import Path

import anyio
import pytest

from lsp_server.config.tree import PolicyConfig
from lsp_server.config.trust import TrustStore
from lsp_server.core.errors import (
    PERMISSION_RULE_DENIED,
    PERMISSION_UNATTENDED,
    PERMISSION_UNREADABLE_ANSWER,
    PERMISSION_USER_DENIED,
)
from lsp_server.policy.authorizer import PolicyRefusal, PolicyService
from lsp_server.protocol import ApproveParams
from lsp_server.server.typed_protocol import toolhost_converter


def service(tmp_path: Path, **policy) -> PolicyService:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    return PolicyService(PolicyConfig(**policy), [root], TrustStore(tmp_path / "state"))


def edit_facts(svc: PolicyService, relative: str):
    return svc.facts(
        tool="edit_file",
        kind="edit",
        read_only=False,
        paths=[(svc.roots[0] / relative, "write")],
        verb="Edit",  # the edit_file contract entry's approval verb
    )


def answering(result):
    asked: list[ApproveParams] = []

    async def ask(request: ApproveParams):  # stub editor
        asked.append(request)
        return result

    return ask, asked


async def authorize(svc, facts, ask, session="s1", diff="--- a\n+++ b\n"):
    return await svc.authorize(
        facts, call_id="c-1", session=session, arguments={"path": "x"}, diff=diff, ask=ask
    )


async def test_request_carries_params_as_in_the_protocol(tmp_path: Path) -> None:
    svc = service(tmp_path)
    ask, asked = answering({"decision": "allow_once"})
    result = await authorize(svc, edit_facts(svc, "src/a.py"), ask)
    assert result.decision == "allow_once"
    params = toolhost_converter().unstructure(asked[0])  # as the server sends it
    assert set(params) == {
        "callId",
        "session",
        "tool",
        "readOnly",
        "title",
        "summary",
        "arguments",
        "paths",
        "diff",
        "risk",
        "suggestedRules",
        "cwd",
        "background",
        "timeoutMs",
        "sandbox",
        "client",
    }
    assert params["paths"] == [str(svc.roots[0] / "src/a.py")]
    assert params["suggestedRules"][:3] == ["edit_file(src/a.py)", "Edit(src/a.py)", "Edit(src/**)"]
    assert params["title"] == "Edit src/a.py" and params["risk"] == "medium"


async def test_deny_answer_carries_the_users_reason(tmp_path: Path) -> None:
    svc = service(tmp_path)
    ask, _ = answering({"decision": "deny", "reason": "use the helper instead"})
    with pytest.raises(PolicyRefusal) as caught:
        await authorize(svc, edit_facts(svc, "a.py"), ask)
    assert caught.value.code == PERMISSION_USER_DENIED
    assert "use the helper instead" in caught.value.reason


async def test_a_dismissed_prompt_is_reported_as_dismissed(tmp_path: Path) -> None:
    svc = service(tmp_path)
    ask, _ = answering({"decision": "deny", "dismissed": True})
    with pytest.raises(PolicyRefusal) as caught:
        await authorize(svc, edit_facts(svc, "a.py"), ask)
    assert caught.value.code == PERMISSION_USER_DENIED
    assert "dismissed the approval prompt" in caught.value.reason
    assert "said" not in caught.value.reason


async def test_allow_session_is_remembered_for_that_session_only(tmp_path: Path) -> None:
    svc = service(tmp_path)
    ask, asked = answering({"decision": "allow_session", "rule": "Edit(src/**)"})
    await authorize(svc, edit_facts(svc, "src/a.py"), ask)
    await authorize(svc, edit_facts(svc, "src/b/c.py"), ask)
    assert len(asked) == 1
    await authorize(svc, edit_facts(svc, "lib/x.py"), ask)
    await authorize(svc, edit_facts(svc, "src/a.py"), ask, session="s2")
    assert len(asked) == 3


async def test_allow_always_persists_the_exact_rule(tmp_path: Path) -> None:
    svc = service(tmp_path)
    (svc.roots[0] / ".toolhost.toml").write_text("# mine\n[policy]\ndeny = []\n")
    ask, asked = answering({"decision": "allow_always", "rule": "Edit(src/**/*.py)"})
    result = await authorize(svc, edit_facts(svc, "src/a.py"), ask)
    assert result.decision == "allow_always" and result.note is None
    text = (svc.roots[0] / ".toolhost.toml").read_text()
    assert text.startswith("# mine\n")
    assert tomllib.loads(text)["policy"]["allow"] == ["Edit(src/**/*.py)"]
    await authorize(svc, edit_facts(svc, "src/b.py"), ask, session="other")
    assert len(asked) == 1


async def test_timeout_is_deny(tmp_path: Path) -> None:
    svc = service(tmp_path, approval_timeout_seconds=0.05)

    async def never(request):  # stub editor that never answers
        await anyio.sleep_forever()

    with pytest.raises(PolicyRefusal) as caught:
        await authorize(svc, edit_facts(svc, "a.py"), never)
    assert caught.value.code == PERMISSION_USER_DENIED
    assert "no answer within" in caught.value.reason


async def test_unattended_and_rule_denials(tmp_path: Path) -> None:
    svc = service(tmp_path, deny=["Edit(secret/**)"])
    with pytest.raises(PolicyRefusal) as caught:
        await authorize(svc, edit_facts(svc, "a.py"), None)
    assert caught.value.code == PERMISSION_UNATTENDED
    with pytest.raises(PolicyRefusal) as caught:
        await authorize(svc, edit_facts(svc, "secret/k"), None)
    assert caught.value.code == PERMISSION_RULE_DENIED
    lenient = service(tmp_path, unattended="allow")
    assert (
        await authorize(lenient, edit_facts(lenient, "a.py"), None)
    ).decision == "unattended_allow"


async def test_garbage_answers_are_denials(tmp_path: Path) -> None:
    svc = service(tmp_path)
    for garbage in [None, "yes", {"decision": "sure"}]:
        ask, _ = answering(garbage)
        with pytest.raises(PolicyRefusal) as caught:
            await authorize(svc, edit_facts(svc, "a.py"), ask)
        # Denied at once, and the model is told the answer could not be read (not "denied").
        assert caught.value.code == PERMISSION_UNREADABLE_ANSWER
        assert "gave an answer toolhost cannot read" in caught.value.reason


async def test_bash_suggestions_are_narrowest_first(tmp_path: Path) -> None:
    svc = service(tmp_path)
    facts = svc.facts(
        tool="bash", kind="shell", read_only=False, paths=[], command="npm run test:unit"
    )
    request = svc.request(
        facts, call_id="c", session="s", arguments={"command": "npm run test:unit"}, diff=None
    )
    # Never broader than program + subcommand: `bash(npm:*)` would approve `npm publish`.
    assert request.suggested_rules == ["bash(npm run test:unit)", "bash(npm run:*)"]
    assert request.title == "Run: npm run test:unit"
    push = svc.facts(
        tool="bash",
        kind="shell",
        read_only=False,
        paths=[],
        command="git push --force origin main",
    )
    push_request = svc.request(push, call_id="c", session="s", arguments={}, diff=None)
    assert push_request.suggested_rules == [
        "bash(git push --force origin main)",
        "bash(git push:*)",
    ]
    rm = svc.facts(
        tool="bash", kind="shell", read_only=False, paths=[], command="git status && rm -rf build"
    )
    rm_request = svc.request(rm, call_id="c", session="s", arguments={}, diff=None)
    assert rm_request.suggested_rules == ["bash(rm -rf build)"]
    assert rm_request.risk == "high"
