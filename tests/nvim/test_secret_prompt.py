"""A command's password prompt answered in real Neovim (the plugin's toolhost/secret
handler, vim.fn.inputsecret): git clone from a loopback smart-HTTP server with basic auth,
called from Neovim and from an MCP agent attached to it; the password is then in no result
and no file of the editor's home (the server's state: audit log, checkpoints; Neovim's
lsp.log). Cancelled, the result says the user cancelled."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.askpass.git_http import PASSWORD, USER, files_holding, git_http_server
from tests.nvim.conftest import Neovim

pytestmark = pytest.mark.real_client

REPO = Path(__file__).resolve().parents[2]


def run(neovim: Neovim, tmp_path: Path, mode: str) -> dict[str, Any]:
    with git_http_server(tmp_path / "srv") as server:
        agent = [sys.executable, str(REPO / "tests" / "askpass" / "mcp_clone_agent.py")]
        out = neovim.run(
            "secret_prompt",
            TOOLHOST_TEST_MODE=mode,
            TOOLHOST_TEST_GIT_URL=server.url,
            TOOLHOST_TEST_USER=USER,
            TOOLHOST_TEST_PASSWORD=PASSWORD,
            TOOLHOST_TEST_AGENT=json.dumps([*agent, str(neovim.workspace), server.url]),
            PYTHONPATH=str(REPO),
        ).out
    return out


@pytest.mark.parametrize("mode", ["editor", "mcp"])
def test_git_clone_asks_neovim_once(neovim: Neovim, tmp_path: Path, mode: str) -> None:
    out = run(neovim, tmp_path, mode)
    if mode == "mcp":
        assert out["agent_code"] == 0, out["agent_stderr"]
        assert out["result"]["runtime"].startswith("editor (pid ")
    result = out["result"]
    assert result["isError"] is False, result
    assert out["readme"] is True, result["content"]
    assert len(out["secret_prompts"]) == 1 and len(out["name_prompts"]) == 1
    assert "127.0.0.1" in out["secret_prompts"][0]
    assert "git clone" in out["name_prompts"][0]
    assert PASSWORD not in json.dumps(out["result"]) + json.dumps(out["prompts"])
    assert files_holding(neovim.home, PASSWORD) == []
    assert files_holding(neovim.workspace, PASSWORD) == []


def test_cancelled_in_neovim_the_result_says_so(neovim: Neovim, tmp_path: Path) -> None:
    out = run(neovim, tmp_path, "cancel")
    result = out["result"]
    assert result["isError"] is True
    assert result["error"]["code"] == "shell.secret_cancelled"
    assert out["readme"] is False
