"""A command's password prompt answered in real VS Code (code-server 4.100.3): git clone
from a loopback smart-HTTP server with basic auth, run from the command palette; the
extension asks in an input box with `password: true` (driver.mjs's "secret" scenario types
into it), the clone succeeds, and the password is in no result, no observation and no
file of VS Code's and toolhost's state. Escape at the password: the result says the user
cancelled."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.askpass.git_http import PASSWORD, USER, files_holding, git_http_server
from tests.vscode.test_vscode_real import run_cycle

pytestmark = [pytest.mark.real_client, pytest.mark.slow, pytest.mark.timeout(600)]


def test_git_clone_asks_in_a_password_box(tmp_path: Path, toolhost_vsix: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello world\n")
    settings: dict[str, Any] = {
        "toolhost.server.path": str(Path(sys.executable).parent / "toolhost"),
        "toolhost.shell": {"sandboxNetwork": True},
    }
    with git_http_server(tmp_path / "srv") as server:
        env = {
            **os.environ,
            "TOOLHOST_E2E_GIT_URL": server.url,
            "TOOLHOST_E2E_USER": USER,
            "TOOLHOST_E2E_PASSWORD": PASSWORD,
        }
        report = run_cycle(
            tmp_path, toolhost_vsix, workspace, "secret", True, settings, base_env=env
        )
    assert report["failures"] == [], json.dumps(report["failures"], indent=2)
    steps = {step["name"]: step for step in report["steps"]}
    answered = steps["secret answered"]
    assert answered["result"]["isError"] is False, answered["result"]
    assert (workspace / "first" / "README.md").read_text() == "served over smart HTTP\n"
    assert "git clone" in answered["title"]
    [event] = answered["events"]
    assert event["answered"] is True and event["params"]["kind"] == "credential"
    cancelled = steps["secret cancelled"]["result"]
    assert cancelled["isError"] is True
    assert cancelled["error"]["code"] == "shell.secret_cancelled"
    assert not (workspace / "second" / "README.md").exists()
    assert PASSWORD not in json.dumps(report)
    state = [tmp_path / name for name in ("home", "user-data", "observations.jsonl")]
    state.append(Path(os.environ["TOOLHOST_STATE_DIR"]))  # the server's: audit, checkpoints
    assert [
        hit for folder in state if folder.exists() for hit in files_holding(folder, PASSWORD)
    ] == []
    assert files_holding(workspace, PASSWORD) == []
