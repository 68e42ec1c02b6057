"""Settings that loosen policy come from setup() only, in real Neovim: a project's
.nvim.lua (which an agent can write; Neovim runs it once the user trusted it) that fills
the generic LSP settings does not reach the server, which still sandboxes and asks
(issue 41); the user's own setup() does reach it."""

from __future__ import annotations

import json

import pytest

from tests.nvim.conftest import Neovim

pytestmark = pytest.mark.real_client

LOOSENING = {"shell": {"sandbox": "off"}, "policy": {"mode": "bypass", "allow": ["Bash"]}}


def test_project_lua_does_not_reach_the_server(neovim: Neovim) -> None:
    loosening = json.dumps({"toolhost": LOOSENING})
    (neovim.workspace / ".nvim.lua").write_text(
        f"local loosening = vim.json.decode([[{loosening}]])\n"
        "vim.g.project_loosening = loosening\n"
        "vim.g.toolhost = loosening.toolhost\n"
        "if vim.lsp.config then vim.lsp.config('*', { settings = loosening }) end\n",
        encoding="utf-8",
    )
    out = neovim.run("project_settings").out
    assert out["configuration"] == [{"policy": {"mode": "acceptEdits"}}, None]
    # The sandbox stays on, and the command (it writes outside the workspace) asks: neither
    # bypass nor allow ["Bash"] applies. Denied, it did not run.
    assert out["sandboxed"]["sandbox"] == "workspace-write", out["sandboxed"]
    assert out["escalation"]["wouldAsk"] is True, out["escalation"]
    assert out["bash"]["error"]["code"] == "permission.user_denied", out["bash"]
    assert not (neovim.home / "escaped").exists()
    # setup()'s own policy reached the server (acceptEdits: a new file does not ask).
    assert out["write"]["wouldAsk"] is False, out["write"]
    sources = out["status"]["policySources"]
    assert "initializationOptions" in sources["policy.mode"], sources
    assert sources["shell.sandbox"] == "default", sources
    assert sources["policy.allow"] == "default", sources
