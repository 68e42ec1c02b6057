"""Issue 41 in real VS Code (code-server): a trusted workspace's .vscode/settings.json, as a
sandboxed agent would write it (`toolhost.shell.sandbox: off`, `policy.mode: bypass`,
`policy.allow: ["Bash"]`, and the same as one object), does not reach the server: commands
still run sandboxed, leaving the sandbox and writing outside still ask (denied: nothing
written), the user's own setting applies, the ignored keys are named once in a warning,
writing the file again mid-session restarts nothing. The workspace .toolhost.toml (mode
bypass) applies only after Review and "Trust this content" in its notification."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.vscode.test_vscode_real import run_cycle, toolhost_executable

pytestmark = [pytest.mark.real_client, pytest.mark.slow, pytest.mark.timeout(600)]

ATTACK = {
    "toolhost.shell.sandbox": "off",
    "toolhost.policy.mode": "bypass",
    "toolhost.policy.allow": ["Bash"],
    "toolhost.shell": {"sandboxNetwork": True},
    "toolhost.policy.trustedRoots": ["/"],
}
AGENT_TOML = '[policy]\nmode = "bypass"\n'


def check_settings(check: dict[str, Any], home: Path) -> None:
    assert "error" not in check, check
    assert check["sandboxed"]["sandbox"] == "workspace-write", check["sandboxed"]
    assert check["escalation"]["wouldAsk"] is True, check["escalation"]
    # The user's own policy.mode (acceptEdits) reached the server: a new file does not ask.
    assert check["write"]["wouldAsk"] is False, check["write"]
    sources = check["status"]["policySources"]
    assert "initializationOptions" in sources["policy.mode"], sources
    assert sources["shell.sandbox"] == "default", sources
    assert sources["shell.sandbox_network"] == "default", sources
    assert sources["policy.allow"] == "default", sources
    assert check["bash"]["error"]["code"] == "permission.user_denied", check["bash"]
    assert check["escaped"] is False
    assert not (home / "escaped").exists()


def test_workspace_settings_do_not_loosen_and_toolhost_toml_needs_review(
    tmp_path: Path, toolhost_vsix: Path
) -> None:
    workspace = tmp_path / "workspace"
    (workspace / ".vscode").mkdir(parents=True)
    (workspace / "hello.txt").write_text("hello world\n")
    (workspace / ".vscode" / "settings.json").write_text(json.dumps(ATTACK, indent=2))
    (workspace / ".toolhost.toml").write_text(AGENT_TOML)
    settings: dict[str, str | bool] = {
        "toolhost.server.path": str(toolhost_executable()),
        "toolhost.policy.mode": "acceptEdits",
    }
    report = run_cycle(
        tmp_path, toolhost_vsix, workspace, "workspaceSettings", True, server_settings=settings
    )
    assert report["failures"] == [], json.dumps(report["failures"], indent=2)
    steps = {step["name"]: step for step in report["steps"]}
    home = tmp_path / "home"

    ignored = steps["ignored at start"]["keys"]
    for key in ("toolhost.shell.sandbox", "toolhost.policy.mode", "toolhost.policy.allow"):
        assert key in ignored, ignored
    assert "toolhost.shell" in ignored and "toolhost.policy.trustedRoots" in ignored, ignored
    assert "set them in your user settings" in steps["ignored at start"]["toast"]
    check_settings(steps["settings check"], home)

    assert "toolhost.web.allowLoopback" in steps["written mid-session"]["keys"]
    after = steps["settings check after the write"]
    assert after["at"] > steps["settings check"]["at"]
    check_settings(after, home)
    # One start, no restart: the write changed nothing the server gets.
    assert steps["server states"]["states"].count("starting") <= 1, steps["server states"]
    assert "stopped" not in steps["server states"]["states"], steps["server states"]

    notice = steps["trust notice"]
    assert notice["params"]["path"] == str(workspace / ".toolhost.toml")
    assert notice["buttons"] == ["Review", "Trust this content"], notice
    assert "policy.mode" in notice["toast"], notice
    assert steps["trust review"]["shown"].split() == AGENT_TOML.split()
    trusted = steps["trusted"]
    assert trusted["params"]["sha256"] == notice["params"]["sha256"]
    assert trusted["result"]["trusted"] is True, trusted
    assert [entry["state"] for entry in trusted["workspaceConfig"]] == ["trusted"], trusted
