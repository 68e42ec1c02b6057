"""The README's Install blocks, extracted and run as a user would, verbatim, in a clean HOME
from a folder that holds the built `dist/` (pip pointed at the offline wheelhouse): the
command installs from the wheel, the block's PATH line makes `toolhost` a command and
`toolhost doctor` runs; without that line doctor names the folder to add. The agents' lines
register the installed toolhost by its absolute path (their sessions, through to a read and
an edit, are test_readme_agents.py); the JSON lines are the configs they claim; `code
--install-extension` takes the vsix. The Neovim and Emacs blocks run in
test_editor_recipes.py."""

from __future__ import annotations

import json
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.conftest import missing_part
from tests.dist.conftest import (
    REPO,
    SYSTEM_PATH,
    ReadmeUser,
    assert_checkout_untouched,
    install_blocks,
    sh,
)
from tests.vscode.vscode_env import CODE_SERVER

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
AGENTS = REPO / ".tools" / "agents" / "node_modules" / ".bin"


def test_the_command_block_ends_in_a_working_toolhost(readme_user: ReadmeUser) -> None:
    """The block as printed: no `command not found`, and its last line, `toolhost doctor`,
    ran and says that the toolhost on PATH is the one just installed."""
    screen = readme_user.screen
    assert "command not found" not in screen, screen
    link = readme_user.home / ".local" / "bin" / "toolhost"
    assert f"  on PATH   ok        {link} (this one)" in screen, screen
    assert "sandbox:" in screen, screen  # the rest of doctor's report ran too
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    said = sh("command -v toolhost; toolhost --version", readme_user.env, readme_user.home)
    where, line = said.stdout.split()[0], said.stdout.strip().splitlines()[-1]
    assert where == str(link)
    assert line == f"toolhost {version}"
    assert_checkout_untouched(readme_user.env)


def test_without_the_path_line_doctor_names_the_folder_to_add(readme_user: ReadmeUser) -> None:
    """A user who skipped the PATH line: `toolhost` is not found, and the absolute path's
    doctor says so and how to fix it."""
    env = {**readme_user.env, "PATH": ":".join(SYSTEM_PATH)}
    missing = sh("toolhost --version", env, readme_user.home)
    assert missing.returncode == 127 and "toolhost: command not found" in missing.stderr
    doctor = sh("~/.local/bin/toolhost doctor", env, readme_user.home)
    assert doctor.returncode == 0, doctor.stderr
    bin_dir = readme_user.home / ".local" / "bin"
    line = next(x for x in doctor.stdout.splitlines() if x.startswith("  on PATH"))
    assert line.startswith("  on PATH   MISSING   no `toolhost` on PATH"), line
    assert f'export PATH="{bin_dir}:$PATH"' in line, line


def test_the_agent_lines_register_the_installed_toolhost(
    readme_user: ReadmeUser, far_folder: Path
) -> None:
    if not (AGENTS / "claude").exists():
        missing_part("the agent CLIs are missing (.tools/agents, scripts/setup of the agents)")
    lines = install_blocks("sh")[1]
    assert lines.count("mcp add toolhost") == 3
    env = {**readme_user.env, "PATH": f"{readme_user.env['PATH']}:{AGENTS}"}
    # Only loopback: the agents' own start-up traffic goes nowhere.
    done = sh(f"unshare -n -- bash -euo pipefail -c {shlex.quote(lines)}", env, far_folder)
    assert done.returncode == 0, done.stdout + done.stderr
    toolhost = str(readme_user.home / ".local" / "bin" / "toolhost")
    home = readme_user.home
    claude = json.loads((home / ".claude.json").read_text())
    server = claude["projects"][str(far_folder)]["mcpServers"]["toolhost"]
    assert (server["command"], server["args"]) == (toolhost, ["mcp"])
    codex = tomllib.loads((home / ".codex" / "config.toml").read_text())
    assert codex["mcp_servers"]["toolhost"]["command"] == toolhost
    assert codex["mcp_servers"]["toolhost"]["args"] == ["mcp", "--approvals", "client"]
    gemini = json.loads((far_folder / ".gemini" / "settings.json").read_text())
    assert gemini["mcpServers"]["toolhost"]["command"] == toolhost
    assert gemini["mcpServers"]["toolhost"]["args"] == ["mcp", "--approvals", "client"]
    # Claude Code starts the installed `toolhost mcp` and completes the handshake, with a
    # PATH that lacks toolhost's folder (the absolute path is what it needs).
    bare = {**env, "PATH": f"{':'.join(SYSTEM_PATH)}:{AGENTS}"}
    listed = sh("unshare -n -- bash -c 'ip link set lo up; claude mcp list'", bare, far_folder)
    assert f"toolhost: {toolhost} mcp - ✔ Connected" in listed.stdout, listed.stdout
    assert_checkout_untouched(readme_user.env)


def test_the_json_lines_are_the_clients_configs() -> None:
    lines = [line for line in install_blocks("json")[0].splitlines() if line.strip()]
    configs = [json.loads(line) for line in lines]
    cursor, zed, vscode = configs
    for entry in (
        cursor["mcpServers"]["toolhost"],
        zed["context_servers"]["toolhost"],
        vscode["servers"]["toolhost"],
    ):
        assert (entry["command"], entry["args"]) == ("toolhost", ["mcp"])


def test_the_vscode_line_installs_the_vsix(dist_dir: Path, tmp_path: Path) -> None:
    if not CODE_SERVER.exists():
        missing_part("code-server is missing (scripts/setup/50-vscode.sh)")
    block = install_blocks("sh")[2].strip()
    assert block.startswith("code --install-extension dist/toolhost-linux-x64-")
    vsix = dist_dir / block.split("dist/", 1)[1]
    home = tmp_path / "home"
    home.mkdir()
    dirs = ["--user-data-dir", str(tmp_path / "data"), "--extensions-dir", str(tmp_path / "ext")]
    done = subprocess.run(
        [str(CODE_SERVER), *dirs, "--install-extension", str(vsix)],
        env={"HOME": str(home), "PATH": ":".join(SYSTEM_PATH)},
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert f"'{vsix.name}' was successfully installed" in done.stdout, done.stdout + done.stderr
    installed = list((tmp_path / "ext").glob("toolhost.toolhost-*"))
    assert len(installed) == 1
    assert (installed[0] / "bundled" / "tool" / "toolhost_serve.py").is_file()
