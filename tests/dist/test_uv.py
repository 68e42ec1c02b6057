"""Where uv and pipx are present (scripts/setup/70-dist-wheelhouse.sh puts them in
.tools/dist-uv and .tools/dist-pipx): `uv tool install` and `pipx install` of the built wheel
(the README's other two ways) give a working `toolhost` in ~/.local/bin whose `doctor` says it
is the one on PATH, and `uvx --from WHEEL toolhost mcp` serves an MCP session without
installing anything. Offline: the wheelhouse and the machine's Python, no download."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation

from tests.conftest import missing_part
from tests.dist.conftest import REPO, WHEELHOUSE, assert_checkout_untouched, system_python

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
UV = REPO / ".tools" / "dist-uv" / "bin" / "uv"
UVX = UV.with_name("uvx")
PIPX = REPO / ".tools" / "dist-pipx" / "bin" / "pipx"
OFFLINE = ["--offline", "--no-index", "--find-links", str(WHEELHOUSE)]


@pytest.fixture
def uv_env(user_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    if not UV.exists():
        missing_part("uv is missing (.tools/dist-uv, scripts/setup/70-dist-wheelhouse.sh)")
    home = Path(user_env["HOME"])
    return {
        **user_env,
        "PATH": f"{home / '.local' / 'bin'}:{user_env['PATH'].split(':', 1)[1]}",
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_PYTHON": system_python(),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_CONFIG": "1",
    }


def test_uv_tool_install_of_the_wheel(
    dist_dir: Path, uv_env: dict[str, str], tmp_path: Path
) -> None:
    wheel = next(dist_dir.glob("toolhost_runtime-*-py3-none-any.whl"))
    done = subprocess.run(
        [str(UV), "tool", "install", *OFFLINE, str(wheel)],
        env=uv_env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = subprocess.run(
        ["toolhost", "--version"], env=uv_env, cwd=tmp_path, capture_output=True, text=True
    )
    assert said.stdout.startswith("toolhost "), said.stderr
    assert_doctor_says_this_one(uv_env, tmp_path)
    assert_checkout_untouched(uv_env)


def assert_doctor_says_this_one(env: dict[str, str], cwd: Path) -> None:
    """`toolhost doctor` of the installed command: ~/.local/bin/toolhost is on PATH and is
    the one running."""
    link = Path(env["HOME"]) / ".local" / "bin" / "toolhost"
    assert link.exists()
    doctor = subprocess.run(
        ["toolhost", "doctor"], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert doctor.returncode == 0, doctor.stderr
    assert f"  on PATH   ok        {link} (this one)" in doctor.stdout, doctor.stdout[:800]


def test_pipx_install_of_the_wheel(
    dist_dir: Path, user_env: dict[str, str], tmp_path: Path
) -> None:
    if not PIPX.exists():
        missing_part("pipx is missing (.tools/dist-pipx, scripts/setup/70-dist-wheelhouse.sh)")
    home = Path(user_env["HOME"])
    env = {
        **user_env,
        # The README's PATH line; pipx's own defaults (~/.local/share/pipx, ~/.local/bin).
        "PATH": f"{home / '.local' / 'bin'}:{user_env['PATH'].split(':', 1)[1]}",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(WHEELHOUSE),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    wheel = next(dist_dir.glob("toolhost_runtime-*-py3-none-any.whl"))
    done = subprocess.run(
        [str(PIPX), "install", "--python", system_python(), str(wheel)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "installed package toolhost-runtime" in done.stdout, done.stdout
    assert_doctor_says_this_one(env, tmp_path)
    assert_checkout_untouched(env)


async def test_uvx_from_the_wheel_serves_mcp(
    dist_dir: Path, uv_env: dict[str, str], far_folder: Path
) -> None:
    wheel = next(dist_dir.glob("toolhost_runtime-*-py3-none-any.whl"))
    params = StdioServerParameters(
        command=str(UVX),
        args=[*OFFLINE, "--from", str(wheel), "toolhost", "mcp"],
        env=uv_env,
        cwd=str(far_folder),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=Implementation(name="uvx", version="1")) as mcp,
    ):
        await mcp.initialize()
        names = {tool.name for tool in (await mcp.list_tools()).tools}
        assert "read_file" in names
        read = await mcp.call_tool("read_file", {"path": "README.md"})
        assert read.is_error is False
        assert "hello from outside the checkout" in read.content[0].text  # type: ignore[union-attr]
