"""Where uv is present (scripts/setup/70-dist-wheelhouse.sh puts one in .tools/dist-uv):
`uv tool install` of the built wheel gives a working `toolhost`, and `uvx --from WHEEL
toolhost mcp` serves an MCP session without installing anything. Offline: the wheelhouse
and the machine's Python, no download."""

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
    home = Path(uv_env["HOME"])
    assert (home / ".local" / "bin" / "toolhost").exists()
    assert_checkout_untouched(uv_env)


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
