"""`toolhost mcp` started with FAKE_API_KEY and GITHUB_TOKEN in its environment, over a
workspace whose .env, config.py and keys/server.pem hold secrets: no probe prints a secret
value in any answer, paged stored result, job output or audit line; a variable the user
passes with shell.env_pass reaches the command."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.clients import RawMcp, raw_mcp
from tests.secrets.probes import (
    FAKE_API_KEY,
    PROBES,
    SERVER_ENV,
    leaked,
    make_workspace,
    user_config,
)

pytestmark = pytest.mark.timeout(300)


async def call(client: RawMcp, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = await client.request("tools/call", {"name": name, "arguments": arguments})
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


def text(result: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in result["content"])


async def started(tmp_path: Path, sandbox: str, extra: str = "") -> tuple[RawMcp, Path]:
    root = tmp_path / "ws"
    make_workspace(root)
    user_config(Path(os.environ["XDG_CONFIG_HOME"]), sandbox, extra)
    client = await raw_mcp(root, {}, "secrets-test", SERVER_ENV)
    return client, root


def audit_text() -> str:
    state = Path(os.environ["TOOLHOST_STATE_DIR"])
    return "".join(p.read_text() for p in state.rglob("audit.jsonl*"))


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["off", "workspace-write"])
async def test_no_probe_prints_a_secret(tmp_path: Path, sandbox: str) -> None:
    client, _ = await started(tmp_path, sandbox)
    try:
        answers: dict[str, str] = {}
        for probe in PROBES:
            result = await call(client, "bash", {"command": probe})
            answers[probe] = json.dumps(result, ensure_ascii=False)
            ref = (result.get("_meta") or {}).get("toolhost/resultRef") or _ref(answers[probe])
            if ref:  # the stored full text, paged back as the model would, to its end
                answers[probe + " (stored)"] = await paged(client, ref)
        leaks = {probe: leaked(answer) for probe, answer in answers.items() if leaked(answer)}
        assert not leaks, leaks
        # The probes did print the values, as placeholders.
        joined = "".join(answers.values())
        assert "‹secret:FAKE_API_KEY›" in joined
        assert "‹secret:.env:DB_PASSWORD›" in joined
        assert "‹secret:keys/server.pem›" in joined
        assert any("(stored)" in probe for probe in answers), "no probe was paged"
        if sandbox == "off":  # the server's own /proc entry holds both variables
            assert "‹secret:GITHUB_TOKEN›" in joined
        assert not leaked(audit_text())
    finally:
        await client.close()


async def paged(client: RawMcp, ref: str) -> str:
    pages, offset = [], 0
    for _ in range(400):
        arguments = {"result_ref": ref, "offset": offset}
        page = await call(
            client,
            "use_capability",
            {"id": "session:tool_result", "action": "call", "arguments": arguments},
        )
        pages.append(json.dumps(page, ensure_ascii=False))
        found = re.search(r"more: call again with offset=(\d+)", text(page))
        if found is None:
            break
        offset = int(found.group(1))
    return "".join(pages)


def _ref(answer: str) -> str | None:
    marker = "stored as result_ref "
    at = answer.find(marker)
    if at < 0:
        return None
    return answer[at + len(marker) :].split(";", 1)[0].split()[0]


async def test_tools_and_background_jobs_print_no_secret(tmp_path: Path) -> None:
    client, _ = await started(tmp_path, "off")
    try:
        results = [
            await call(client, "grep", {"pattern": "sk-live"}),
            await call(client, "grep", {"pattern": "API_KEY", "path": "."}),
            await call(client, "read_file", {"path": "config.py"}),
            await call(client, "read_file", {"path": ".env"}),
        ]
        assert "‹secret:FAKE_API_KEY›" in text(results[2])
        assert results[3]["isError"]  # the reader refuses the secret file itself
        started_job = await call(
            client,
            "bash",
            {"command": "printenv; cat /proc/*/environ; cat .env", "run_in_background": True},
        )
        job_id = text(started_job).split('"')[1]
        output = await call(client, "job_output", {"job_id": job_id, "wait": True})
        results += [started_job, output]
        assert "‹secret:" in text(output)
        leaks = [leaked(json.dumps(r, ensure_ascii=False)) for r in results]
        assert not any(leaks), leaks
        assert not leaked(audit_text())
    finally:
        await client.close()


async def test_env_pass_lets_the_command_use_the_variable(tmp_path: Path) -> None:
    client, _ = await started(tmp_path, "workspace-write", 'env_pass = ["FAKE_API_KEY"]\n')
    try:
        digest = hashlib.sha256(FAKE_API_KEY.encode()).hexdigest()
        script = (
            "import os,hashlib;"
            "print(hashlib.sha256(os.environ['FAKE_API_KEY'].encode()).hexdigest())"
        )
        used = await call(client, "bash", {"command": f'python3 -c "{script}"'})
        assert digest in text(used)
        command = "echo key=$FAKE_API_KEY; printenv GITHUB_TOKEN"
        printed = await call(client, "bash", {"command": command})
        assert "key=‹secret:FAKE_API_KEY›" in text(printed)
        assert not leaked(json.dumps(printed, ensure_ascii=False))
    finally:
        await client.close()


async def test_without_env_pass_the_command_does_not_get_it(tmp_path: Path) -> None:
    client, _ = await started(tmp_path, "workspace-write")
    try:
        command = 'echo "[${FAKE_API_KEY:-unset}] [${GITHUB_TOKEN:-unset}]"'
        result = await call(client, "bash", {"command": command})
        assert "[unset] [unset]" in text(result)
    finally:
        await client.close()


async def test_a_placeholder_is_not_written_back(tmp_path: Path) -> None:
    client, root = await started(tmp_path, "off")
    try:
        read = await call(client, "read_file", {"path": "config.py"})
        assert "‹secret:FAKE_API_KEY›" in text(read)
        written = await call(
            client,
            "write_file",
            {"path": "config.py", "content": "API_KEY = '‹secret:FAKE_API_KEY›'\nDEBUG = 1\n"},
        )
        assert written["isError"], written
        assert "edit.secret_placeholder" in text(written)
        edited = await call(
            client,
            "edit_file",
            {
                "path": "config.py",
                "old_string": "API_KEY",
                "new_string": "KEY = '‹secret:FAKE_API_KEY›'\nAPI_KEY",
            },
        )
        assert "edit.secret_placeholder" in text(edited)
        assert FAKE_API_KEY in (root / "config.py").read_text()
        # Its old_string holds the placeholder: the file holds the value, and the hint says so.
        unmatched = {
            "path": "config.py",
            "old_string": "API_KEY = '‹secret:FAKE_API_KEY›'",
            "new_string": "API_KEY = 'other'",
        }
        missed = await call(client, "edit_file", unmatched)
        assert "edit.not_found" in text(missed)
        assert "stands for a secret value hidden from you" in text(missed)
        renamed = {"path": "config.py", "old_string": "API_KEY", "new_string": "OPENAI_KEY"}
        fine = await call(client, "edit_file", renamed)
        assert not fine["isError"], fine
        assert (root / "config.py").read_text() == f"OPENAI_KEY = '{FAKE_API_KEY}'\n"
    finally:
        await client.close()


async def test_a_workspace_file_cannot_pass_a_credential(tmp_path: Path) -> None:
    """env_pass loosens: an agent-written .toolhost.toml (not approved) does not let the
    variable through; its env_drop (tightening) applies at once."""
    root = tmp_path / "ws"
    make_workspace(root)
    (root / ".toolhost.toml").write_text(
        '[shell]\nenv_pass = ["FAKE_API_KEY", "*"]\nenv_drop = ["LANG"]\n', encoding="utf-8"
    )
    user_config(Path(os.environ["XDG_CONFIG_HOME"]), "workspace-write")
    client = await raw_mcp(root, {}, "secrets-test", {**SERVER_ENV, "LANG": "C.UTF-8"})
    try:
        command = 'echo "[${FAKE_API_KEY:-unset}] [${GITHUB_TOKEN:-unset}] [${LANG:-unset}]"'
        result = await call(client, "bash", {"command": command})
        assert "[unset] [unset] [unset]" in text(result), text(result)
    finally:
        await client.close()


@pytest.mark.slow
async def test_progress_lines_hold_no_secret(tmp_path: Path) -> None:
    """A running command's last line goes out as notifications/progress: redacted too."""
    client, _ = await started(tmp_path, "workspace-write")
    try:
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": "p1",
                "method": "tools/call",
                "params": {
                    "name": "bash",
                    # Longer than two of the runner's half-second progress ticks.
                    "arguments": {"command": "cat config.py; sleep 1.5"},
                    "_meta": {"progressToken": "tok"},
                },
            }
        )
        seen = []
        while True:
            message = await client.next_message()
            seen.append(json.dumps(message, ensure_ascii=False))
            if message.get("id") == "p1" and "method" not in message:
                break
        progress = [line for line in seen if "notifications/progress" in line]
        assert any("‹secret:FAKE_API_KEY›" in line for line in progress), seen
        assert not leaked("".join(seen))
    finally:
        await client.close()


async def test_other_processes_credentials_are_replaced(tmp_path: Path) -> None:
    """An agent CLI's key is in its own process, not in the server's environment: with the
    sandbox off a command reads it from /proc; it is replaced all the same."""
    other_key = "sk-ant-api03-Other9Process8Key7Value"
    other = subprocess.Popen(
        ["sleep", "120"], env={"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": other_key}
    )
    try:
        client, _ = await started(tmp_path, "off")
        try:
            command = "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a ANTHROPIC"
            result = await call(client, "bash", {"command": command})
            assert "ANTHROPIC_API_KEY=‹secret:ANTHROPIC_API_KEY›" in text(result), text(result)
            assert other_key not in json.dumps(result, ensure_ascii=False)
        finally:
            await client.close()
    finally:
        other.kill()
        other.wait()
