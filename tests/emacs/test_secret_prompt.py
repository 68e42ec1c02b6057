"""A command's password prompt answered in real Emacs (toolhost.el's toolhost/secret
handler, read-passwd): git clone from a loopback smart-HTTP server with basic auth asks
once and succeeds; the password is in no result and no file of the editor's home (the
server's state: audit log, checkpoints). Cancelled (C-g), the result says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.askpass.git_http import PASSWORD, USER, files_holding, git_http_server
from tests.emacs.conftest import Emacs

pytestmark = pytest.mark.real_client


def run(emacs: Emacs, tmp_path: Path, mode: str) -> dict[str, Any]:
    with git_http_server(tmp_path / "srv") as server:
        return emacs.run(
            "secret_prompt",
            TOOLHOST_TEST_MODE=mode,
            TOOLHOST_TEST_GIT_URL=server.url,
            TOOLHOST_TEST_USER=USER,
            TOOLHOST_TEST_PASSWORD=PASSWORD,
        )


def test_git_clone_asks_emacs_once(emacs: Emacs, tmp_path: Path) -> None:
    out = run(emacs, tmp_path, "editor")
    result = out["result"]
    assert result["isError"] is False, result
    assert out["readme"] is True, result["content"]
    assert len(out["secret_prompts"]) == 1 and len(out["name_prompts"]) == 1
    assert "git clone" in out["name_prompts"][0] and "127.0.0.1" in out["name_prompts"][0]
    assert out["approvals"] == 1
    assert PASSWORD not in json.dumps(out)
    assert files_holding(emacs.home, PASSWORD) == []
    assert files_holding(emacs.workspace, PASSWORD) == []


def test_cancelled_in_emacs_the_result_says_so(emacs: Emacs, tmp_path: Path) -> None:
    out = run(emacs, tmp_path, "cancel")
    result = out["result"]
    assert result["isError"] is True
    assert result["error"]["code"] == "shell.secret_cancelled"
    assert "the user cancelled it" in result["content"][0]["text"]
    assert out["readme"] is False
