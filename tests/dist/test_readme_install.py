"""The README's Install blocks, extracted and run as a user would (paths to the artefacts
filled in, pip pointed at the offline wheelhouse): the command installs from the wheel into
a temporary HOME and runs; the agents' one-line setups register it and Claude Code connects
to it; the JSON lines are the configs they claim; `code --install-extension` takes the vsix.
The Neovim and Emacs blocks run in test_editor_recipes.py."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.conftest import missing_part
from tests.dist.conftest import (
    REPO,
    SYSTEM_PATH,
    assert_checkout_untouched,
    user_environment,
)
from tests.vscode.vscode_env import CODE_SERVER

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
AGENTS = REPO / ".tools" / "agents" / "node_modules" / ".bin"


def install_blocks(language: str) -> list[str]:
    section = (REPO / "README.md").read_text().split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    parts = section.split(f"```{language}\n")[1:]
    return [part.split("```", 1)[0] for part in parts]


def sh(block: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def readme_user(
    tmp_path_factory: pytest.TempPathFactory, dist_dir: Path, user_wheelhouse: Path
) -> dict[str, str]:
    """A user who ran the README's first block: toolhost in ~/.local/bin, nothing else."""
    folder = tmp_path_factory.mktemp("readme-user")
    home = folder / "home"
    env = user_environment(folder, [str(home / ".local" / "bin")])
    hook = folder / "audit"
    hook.mkdir()
    shutil.copy(Path(__file__).with_name("audit_hook.py"), hook / "sitecustomize.py")
    env.update(
        {
            # The audit hook rides along (a temp folder, not the checkout).
            "PYTHONPATH": str(hook),
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(user_wheelhouse),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }
    )
    block = install_blocks("sh")[0].replace(" dist/", f" {dist_dir}/")
    assert "pip install" in block and str(dist_dir) in block
    done = sh(block, env, folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (home / ".local" / "bin" / "toolhost").exists()
    # `toolhost doctor` (the block's last line) named what this machine lacks or has.
    assert "sandbox:" in done.stdout, done.stdout
    return env


def test_the_command_block_installs_toolhost_from_the_wheel(
    readme_user: dict[str, str], tmp_path: Path
) -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    said = sh("command -v toolhost; toolhost --version", readme_user, tmp_path)
    where, line = said.stdout.split()[0], said.stdout.strip().splitlines()[-1]
    assert where == f"{readme_user['HOME']}/.local/bin/toolhost"
    assert line == f"toolhost {version}"
    assert_checkout_untouched(readme_user)


def test_the_agent_lines_register_the_installed_toolhost(
    readme_user: dict[str, str], far_folder: Path
) -> None:
    if not (AGENTS / "claude").exists():
        missing_part("the agent CLIs are missing (.tools/agents, scripts/setup of the agents)")
    lines = install_blocks("sh")[1]
    assert lines.count("mcp add toolhost") == 3
    env = {**readme_user, "PATH": f"{readme_user['PATH']}:{AGENTS}"}
    # Only loopback: the agents' own start-up traffic goes nowhere.
    done = sh(f"unshare -n -- bash -euo pipefail -c {shlex.quote(lines)}", env, far_folder)
    assert done.returncode == 0, done.stdout + done.stderr
    home = Path(readme_user["HOME"])
    claude = json.loads((home / ".claude.json").read_text())
    server = claude["projects"][str(far_folder)]["mcpServers"]["toolhost"]
    assert (server["command"], server["args"]) == ("toolhost", ["mcp"])
    codex = tomllib.loads((home / ".codex" / "config.toml").read_text())
    assert codex["mcp_servers"]["toolhost"]["command"] == "toolhost"
    assert codex["mcp_servers"]["toolhost"]["args"] == ["mcp"]
    gemini = json.loads((far_folder / ".gemini" / "settings.json").read_text())
    assert gemini["mcpServers"]["toolhost"]["command"] == "toolhost"
    # Claude Code starts the installed `toolhost mcp` and completes the handshake.
    listed = sh("unshare -n -- bash -c 'ip link set lo up; claude mcp list'", env, far_folder)
    assert "toolhost: toolhost mcp - ✔ Connected" in listed.stdout, listed.stdout + listed.stderr
    assert_checkout_untouched(readme_user)


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
