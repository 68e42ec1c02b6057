"""`toolhost.server.warm` in real VS Code (code-server): the extension starts its server as
`toolhost serve --warm`, and the process serving the extension host's pipes is a child of
the warm process (tests/warm/editor_servers.py). One cycle: ~20 s here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.vscode.test_vscode_real import run_cycle, toolhost_executable
from tests.warm.editor_servers import assert_served_by_a_warm_child, warm_process

pytestmark = [pytest.mark.real_client, pytest.mark.slow, pytest.mark.timeout(600)]


def test_the_warm_setting_runs_the_server_in_a_warm_child(
    tmp_path: Path, toolhost_vsix: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello world\n")
    settings: dict[str, str | bool] = {
        "toolhost.server.path": str(toolhost_executable()),
        "toolhost.server.warm": True,
    }
    with warm_process(workspace) as warm_pid:
        report = run_cycle(
            tmp_path, toolhost_vsix, workspace, "warm", True, server_settings=settings
        )
        assert report["failures"] == [], json.dumps(report["failures"], indent=2)
        steps = {step["name"]: step for step in report["steps"]}
        assert steps["extension activated"]["serverState"] == "running"
        assert steps["run tool read_file"]["result"]["isError"] is False
        assert_served_by_a_warm_child(steps["server channels"], warm_pid)
