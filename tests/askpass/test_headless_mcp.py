"""Headless: `toolhost mcp` with no editor to attach to (the SDK's client, which shows no
forms) runs `git ls-remote` of a loopback server that asks for a password. Nobody can be asked,
and a password never goes to the model: the result is shell.secret_unavailable, saying to
run the command in the user's own terminal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.askpass.git_http import git_http_server
from tests.mcp.clients import mcp_session, text_of

pytestmark = pytest.mark.slow


async def test_headless_mcp_refuses_and_names_the_terminal(tmp_path: Path) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "toolhost"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(
        '[policy]\nmode = "bypass"\n[shell]\nsandbox_network = true\n', encoding="utf-8"
    )
    root = tmp_path / "ws"
    root.mkdir()
    with git_http_server(tmp_path / "srv") as server:
        async with mcp_session(root, "--attach", "never") as session:
            command = f"git ls-remote {server.url}"
            result = await session.call_tool("bash", {"command": command})
    assert result.is_error
    text = text_of(result)
    assert "shell.secret_unavailable" in text
    assert f"run it in their own terminal: {command}" in text
    assert not any(r.endswith(" auth") for r in server.requests)
