"""The VS Code package of `./run dist`, installed into real VS Code (code-server) with a clean
profile, on a PATH where no toolhost and no toolhost venv exists: the extension starts the
server it carries with the machine's python3, a Run Tool call works, an approval appears
(screenshot in test-artifacts/vscode/bundled/) and is applied."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.dist.conftest import REPO, SYSTEM_PATH
from tests.vscode.test_vscode_real import run_cycle
from tests.vscode.vscode_env import CODE_SERVER_ROOT

pytestmark = [pytest.mark.real_client, pytest.mark.slow, pytest.mark.timeout(900)]


def test_the_vsix_runs_its_bundled_server_without_toolhost_installed(
    tmp_path: Path, dist_dir: Path
) -> None:
    vsix = next(dist_dir.glob("toolhost-linux-x64-*.vsix"))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello world\n")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {"PATH": ":".join(SYSTEM_PATH), "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": str(runtime)}
    # A user's machine: python3 without toolhost, no toolhost command.
    probe = subprocess.run(
        ["python3", "-c", "import lsp_server"], env=env, cwd=tmp_path, capture_output=True
    )
    assert probe.returncode != 0, "python3 on the user PATH must not have toolhost"
    assert subprocess.run(["which", "toolhost"], env=env, capture_output=True).returncode != 0

    report = run_cycle(tmp_path, vsix, workspace, "bundled", True, server_settings={}, base_env=env)
    assert report["failures"] == [], json.dumps(report["failures"], indent=2)
    steps = {step["name"]: step for step in report["steps"]}
    assert steps["extension activated"]["serverState"] == "running"
    assert "(bundled)" in steps["status bar"]["text"], steps["status bar"]
    assert steps["run tool read_file"]["result"]["isError"] is False
    grep = steps["run tool grep"]["result"]
    assert grep["isError"] is False and "hello.txt" in grep["content"][0]["text"], grep
    assert steps["bundled approval shown"]  # the diff editor opened with the decisions
    edit = steps["bundled edit"]
    assert edit["result"]["isError"] is False, edit["result"]
    assert edit["onDisk"] == "hello from the bundled server\n"
    assert (workspace / "hello.txt").read_text() == "hello from the bundled server\n"
    screenshot = REPO / "test-artifacts" / "vscode" / "bundled" / "bundled-approval.png"
    assert screenshot.stat().st_size > 10_000

    # The server is the package's: the machine's python3 running bundled/tool, its native
    # libraries (tree-sitter, pydantic-core ...) mapped from the installed extension.
    server = steps["server process"]
    assert server["found"], server
    assert "bundled/tool/toolhost_serve.py serve" in server["cmdline"], server["cmdline"]
    assert server["exe"].startswith("/usr/"), server["exe"]
    extensions = str(tmp_path / "extensions")
    bundled_libs = [m for m in server["maps"] if m.startswith(extensions) and "/bundled/" in m]
    assert any("tree_sitter" in m for m in bundled_libs), server["maps"]
    assert not any(m.startswith(str(REPO)) for m in server["maps"]), server["maps"]
    # code-server puts its own remote-cli folder on the PATH it gives extensions; the test
    # machine keeps code-server in the checkout's .tools, a user's machine elsewhere.
    path = [p for p in server["path"].split(":") if not p.startswith(str(CODE_SERVER_ROOT))]
    assert not any(p.startswith(str(REPO)) for p in path), server["path"]
    assert str(REPO) not in server["pythonPath"]
    assert not server["cwd"].startswith(str(REPO))


def test_without_a_usable_python_one_message_names_the_fix(tmp_path: Path, dist_dir: Path) -> None:
    """A PATH (the login shell's too) with node and no Python at all: the extension says,
    once, that its bundled server needs Python 3.11+ and how to get one."""
    vsix = next(dist_dir.glob("toolhost-linux-x64-*.vsix"))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello world\n")
    only_node = tmp_path / "bin"
    only_node.mkdir()
    (only_node / "node").symlink_to(shutil.which("node") or "/usr/bin/node")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {"PATH": str(only_node), "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": str(runtime)}
    # VS Code takes PATH from the user's login shell: the user's profile sets it, as on a
    # machine whose PATH has no Python.
    home = tmp_path / "home"
    home.mkdir()
    (home / ".profile").write_text(f"PATH={only_node}\nexport PATH\n")
    (home / ".bash_profile").write_text(". ~/.profile\n")
    report = run_cycle(
        tmp_path, vsix, workspace, "nopython", True, server_settings={}, base_env=env
    )
    assert report["failures"] == [], json.dumps(report["failures"], indent=2)
    steps = {step["name"]: step for step in report["steps"]}
    assert steps["no python"]["serverState"] == "failed"
    assert "failed" in steps["no python"]["status"]
    [message] = steps["no python notifications"]["items"]
    assert message["severity"] == "error", message
    text = message["text"]
    assert "bundled server needs Python 3.11" in text and "no Python found" in text, text
    assert "Install Python 3.11 or newer" in text and "toolhost.server.path" in text, text
