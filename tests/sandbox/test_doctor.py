"""`toolhost doctor` as a subprocess: the sandbox line with bubblewrap, without it (fail
closed), and with the sandbox turned off in the user's config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.sandbox.test_sandbox_e2e import _path_without_bwrap

TOOLHOST = [sys.executable, "-m", "lsp_server"]


def _doctor(root: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [*TOOLHOST, "doctor", "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return done.stdout[done.stdout.index("sandbox:") :]


def test_doctor_reports_the_sandbox(tmp_path: Path, bwrap: str) -> None:
    text = _doctor(tmp_path, dict(os.environ))
    assert text.startswith("sandbox: bubblewrap ")
    assert "mode workspace-write (the default)" in text


def test_doctor_without_bubblewrap_fails_closed(tmp_path: Path, bwrap: str) -> None:
    env = dict(os.environ, PATH=_path_without_bwrap(tmp_path / "shadow"))
    text = _doctor(tmp_path, env)
    assert text.startswith("sandbox: UNAVAILABLE — bubblewrap (bwrap) is not on PATH")
    assert "every command that is not a plain read asks first" in text
    assert "apt-get install bubblewrap" in text


def test_doctor_shows_sandbox_off_and_where(tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "toolhost").mkdir(parents=True)
    user_file = config / "toolhost" / "config.toml"
    user_file.write_text('[shell]\nsandbox = "off"\n')
    text = _doctor(tmp_path, dict(os.environ, XDG_CONFIG_HOME=str(config)))
    assert text.startswith(f"sandbox: OFF (set in {user_file})")


def test_doctor_names_the_network_allow_list(tmp_path: Path, bwrap: str) -> None:
    config = tmp_path / "config"
    (config / "toolhost").mkdir(parents=True)
    user_file = config / "toolhost" / "config.toml"
    user_file.write_text('[shell]\nsandbox_network_allow = ["pypi.org", "127.0.0.1:8080"]\n')
    text = _doctor(tmp_path, dict(os.environ, XDG_CONFIG_HOME=str(config)))
    assert "network only to pypi.org, 127.0.0.1:8080 through toolhost's proxy" in text
