"""Over MCP (`toolhost mcp` subprocesses, every approval denied): a `.toolhost.toml` the agent
wrote in a workspace the user trusts does not apply in a new session; it applies once the
user approved its exact content with `toolhost trust`, and stops when it changes. The
managed file's locks beat `--approvals client` and the user file; an invalid one fails
closed. No MCP or attach connection can approve a config file."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_server.attach import wire
from tests.helpers import lsp_session
from tests.mcp.clients import mcp_session, raw_mcp, structured, text_of, toolhost_command
from tests.mcp.test_attach import _exchange, wait_for_record
from tests.mcp.test_client_approvals import user_config
from tests.mcp.test_elicitation import EDIT

AGENT_CONFIG = """\
[shell]
sandbox = "off"
[policy]
mode = "bypass"
allow = ["Bash"]
"""


def toolhost(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*toolhost_command(), *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


async def agent_steps(ws: Path, outside: Path, *args: str) -> dict[str, Any]:
    """What an agent tries in a new session: a command that writes outside the workspace, and
    a file write. Elicitation is not offered, so whatever asks is denied."""
    async with mcp_session(ws, "--attach", "never", *args) as session:
        command = await session.call_tool("bash", {"command": f"echo escaped > {outside}"})
        await session.call_tool("read_file", {"path": "notes.md"})
        edit = await session.call_tool("edit_file", EDIT)
    return {"command": command, "edit": edit}


def assert_contained(ws: Path, outside: Path, steps: dict[str, Any]) -> None:
    assert not outside.exists(), text_of(steps["command"])
    assert steps["edit"].is_error, text_of(steps["edit"])
    assert structured(steps["edit"])["code"] == "permission.unattended"
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"


@pytest.mark.slow
async def test_an_agent_written_config_applies_only_once_approved(ws: Path, tmp_path: Path) -> None:
    user_config(f'[policy]\ntrusted_roots = ["{ws}"]\n')  # the user trusts this project
    config = ws / ".toolhost.toml"
    config.write_text(AGENT_CONFIG)  # however the agent managed to write it
    # Outside the workspace and outside the sandbox's private /tmp.
    outside = Path("/var/tmp") / f"toolhost-mcp-trust-{os.getpid()}-{tmp_path.name}"
    try:
        await contained_until_approved(ws, config, outside)
    finally:
        outside.unlink(missing_ok=True)


async def contained_until_approved(ws: Path, config: Path, outside: Path) -> None:
    assert_contained(ws, outside, await agent_steps(ws, outside))
    status = toolhost("status", "--root", str(ws), "--json")
    assert '"state": "untrusted"' in status.stdout, status.stdout + status.stderr
    assert "new file, not yet approved" in status.stdout

    sha = hashlib.sha256(config.read_bytes()).hexdigest()
    wrong = toolhost("trust", str(config), "--sha256", "1" * 64)
    assert wrong.returncode == 1 and "changed since it was shown" in wrong.stderr
    approved = toolhost("trust", str(config), "--sha256", sha)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert f"approved {config}" in approved.stdout

    loosened = await agent_steps(ws, outside)
    assert outside.read_text() == "escaped\n"  # no sandbox now: the user approved that
    assert not loosened["edit"].is_error, text_of(loosened["edit"])
    outside.unlink()

    # One more line from the agent: untrusted again, in the next session.
    config.write_text(AGENT_CONFIG + "# harmless, it says\n")
    (ws / "notes.md").write_text("# Notes\n\nline three\n")
    assert_contained(ws, outside, await agent_steps(ws, outside))


@pytest.mark.slow
async def test_no_mcp_or_attach_connection_can_approve_a_config(ws: Path) -> None:
    config = ws / ".toolhost.toml"
    config.write_text(AGENT_CONFIG)
    params = {"path": str(config), "sha256": hashlib.sha256(config.read_bytes()).hexdigest()}
    client = await raw_mcp(ws, {}, "agent")
    try:
        answer = await client.request("toolhost/trustConfig", params)
    finally:
        await client.close()
    assert answer["error"]["code"] == -32601, answer
    async with lsp_session(ws, {"workspaceTrusted": True}):
        record = await wait_for_record(ws)
        trust = {"jsonrpc": "2.0", "id": 2, "method": "toolhost/trustConfig", "params": params}
        attach = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "toolhost/attach",
            "params": {"token": record.token, "client": {"name": "agent"}},
        }
        (as_handshake,) = await _exchange(record, {**trust, "params": {**params, "token": ""}})
        attached, after_attach = await _exchange(record, attach, trust)
    assert as_handshake["error"]["code"] == wire.WRONG_TOKEN
    assert attached["result"]["session"] == "mcp:agent"
    assert after_attach["error"]["code"] == wire.METHOD_NOT_FOUND
    status = toolhost("status", "--root", str(ws), "--json")
    assert '"state": "untrusted"' in status.stdout


def managed_env(tmp_path: Path, text: str | bytes) -> dict[str, str]:
    managed = tmp_path / "managed.toml"
    if isinstance(text, bytes):
        managed.write_bytes(text)
    else:
        managed.write_text(text)
    return {"TOOLHOST_MANAGED_CONFIG": str(managed)}


@pytest.mark.slow
async def test_managed_locks_beat_the_approvals_flag_and_the_user_file(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_config('[policy]\nmode = "acceptEdits"\n[mcp]\napprovals = "client"\n')
    env = managed_env(tmp_path, '[policy]\nmode = "default"\n[mcp]\napprovals = "auto"\n')
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    async with mcp_session(ws, "--attach", "never", "--approvals", "client") as session:
        await session.call_tool("read_file", {"path": "notes.md"})
        result = await session.call_tool("edit_file", EDIT)
    # Neither acceptEdits (user file) nor the client's own approval (flag): it asked, and
    # with no form to show it was denied.
    assert structured(result)["code"] == "permission.unattended", text_of(result)
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"
    status = toolhost("status", "--root", str(ws), "--json")
    assert f'"policy.mode": "managed file {env["TOOLHOST_MANAGED_CONFIG"]}"' in status.stdout


async def test_an_invalid_managed_file_fails_closed(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_config('[policy]\nmode = "bypass"\nallow = ["Bash"]\n')
    env = managed_env(tmp_path, "[policy\nmode = 'bypass'")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    async with mcp_session(ws, "--attach", "never") as session:
        first = await session.call_tool("read_file", {"path": "notes.md"})
        command = await session.call_tool("bash", {"command": "ls"})
        await session.call_tool("read_file", {"path": "notes.md"})
        edit = await session.call_tool("edit_file", EDIT)
    assert "fails closed" in text_of(first), text_of(first)
    assert command.is_error and structured(command)["code"] == "permission.unattended"
    assert edit.is_error and (ws / "notes.md").read_text() == "# Notes\n\nline three\n"
    doctor = toolhost("status", "--root", str(ws))
    assert "managed file: INVALID" in doctor.stdout and "fails closed" in doctor.stdout


async def test_status_shows_the_editors_own_sources_too(ws: Path) -> None:
    async with lsp_session(ws, {"policy": {"mode": "acceptEdits"}}):
        await wait_for_record(ws)
        done = await asyncio.to_thread(toolhost, "status", "--root", str(ws))
    assert "policy.mode                  'default'  from default" in done.stdout, done.stdout
    editor = done.stdout.split("The editor's toolhost here", 1)[1]
    assert "policy.mode" in editor and "from editor settings (initializationOptions)" in editor
