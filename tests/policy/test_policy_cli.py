"""`toolhost call` follows the policy: no TTY -> unattended, --yes allows, deny still wins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def toolhost_call(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_server", "call", *args, "--root", str(root)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )


@pytest.mark.slow
def test_cli_call_without_a_terminal(workspace: Path, tmp_path: Path) -> None:
    env = dict(os.environ)
    config = Path(env["XDG_CONFIG_HOME"]) / "toolhost" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[policy]\ndeny = ["write_file(locked/**)"]\n')
    unattended = toolhost_call(
        workspace, "write_file", '{"path": "a.txt", "content": "a"}', env=env
    )
    assert unattended.returncode == 1 and "permission.unattended" in unattended.stdout
    assert not (workspace / "a.txt").exists()
    allowed = toolhost_call(
        workspace, "write_file", '{"path": "a.txt", "content": "a"}', "--yes", env=env
    )
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert (workspace / "a.txt").read_text() == "a"
    denied = toolhost_call(
        workspace, "write_file", '{"path": "locked/b.txt", "content": "b"}', "--yes", env=env
    )
    assert denied.returncode == 1 and "permission.rule_denied" in denied.stdout
    assert not (workspace / "locked").exists()
    audit = (Path(env["TOOLHOST_STATE_DIR"]) / "audit.jsonl").read_text().splitlines()
    assert len(audit) == 3


def test_cli_call_asks_on_a_terminal(workspace: Path) -> None:
    import pty

    master, slave = pty.openpty()
    try:
        # Typed ahead: the terminal keeps the line until the prompt reads it.
        os.write(master, b"n rather not\n")
        child = subprocess.run(
            [
                sys.executable,
                "-m",
                "lsp_server",
                "call",
                "write_file",
                '{"path": "t.txt", "content": "t"}',
                "--root",
                str(workspace),
            ],
            stdin=slave,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    finally:
        os.close(slave)
        os.close(master)
    assert "Write t.txt" in child.stderr and "Allow?" in child.stderr
    assert child.returncode == 1 and "permission.user_denied" in child.stdout
    assert "rather not" in child.stdout
    assert not (workspace / "t.txt").exists()
