"""A home folder the user allowed as a root, and `/`, over MCP as a new user meets them
(issue 43; bench/large_roots.py measures them at 2 GB): `toolhost mcp` started in the home
folder with HOME set to it, so its state and config folders are inside the root. At CI size
(3,000 files, `max_root_files` lowered to 1,000): the first `bash` result says once that
shell checkpoints are off and what that means for a revert, the state folder holds no
snapshot, the server's stderr no traceback; the next call says nothing more."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints.first_snapshot import STAYS_OFF
from tests.checkpoints.test_root_budget import make_tree
from tests.mcp.clients import RawMcp, toolhost_command

pytestmark = pytest.mark.timeout(180)

CONFIG = """[policy]
mode = "bypass"

[workspace]
allow_broad_roots = true

[checkpoints]
max_root_files = 1000
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    make_tree(folder / "projects", 60, 50)  # 3,000 files
    (folder / ".bashrc").write_text("# mine\n")
    (folder / ".config" / "toolhost").mkdir(parents=True)
    (folder / ".config" / "toolhost" / "config.toml").write_text(CONFIG)
    return folder


async def started(home: Path, *args: str) -> RawMcp:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.pop("TOOLHOST_STATE_DIR", None)
    env["HOME"] = str(home)
    process = await asyncio.create_subprocess_exec(
        *toolhost_command(),
        "mcp",
        "--attach",
        "never",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=home,
        env=env,
    )
    client = RawMcp(process)
    await client.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "broad-roots-checkpoints", "version": "0"},
        },
    )
    await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return client


async def bash_text(client: RawMcp, command: str) -> str:
    answer = await client.request("tools/call", {"name": "bash", "arguments": {"command": command}})
    result: dict[str, Any] = answer["result"]
    assert not result.get("isError"), result
    return "\n".join(part.get("text", "") for part in result["content"])


async def stderr_of(client: RawMcp) -> str:
    assert client.process.stdin is not None and client.process.stderr is not None
    client.process.stdin.close()
    err = await asyncio.wait_for(client.process.stderr.read(), 60)
    await client.close()
    return err.decode(errors="replace")


def snapshot_objects(state: Path) -> int:
    return sum(1 for _ in (state / "checkpoints").rglob("objects/??/*"))


@pytest.mark.parametrize("root", ["home", "/"])
async def test_an_allowed_broad_root_answers_at_once_and_says_what_a_revert_can_do(
    home: Path, root: str
) -> None:
    root_path = home if root == "home" else Path("/")
    client = await started(home, *(["--root", "/"] if root == "/" else []))
    try:
        first = await bash_text(client, f"echo x >> {home}/.bashrc")
        second = await bash_text(client, f"echo y >> {home}/.bashrc")
    finally:
        err = await stderr_of(client)
    (line,) = [line for line in first.splitlines() if line.startswith("[no checkpoint")]
    over = "more than 1,000 files (checkpoints.max_root_files)"
    if root == "/":  # a few large system files can reach the byte budget first
        over = "more than 1,000 files" if "1,000 files" in line else "more than 512 MB"
    assert line.startswith(
        f"[no checkpoint of {root_path}: shell checkpoints are off for this root: it holds {over}"
    ), line
    assert line.endswith(f"; {STAYS_OFF}]"), line
    assert "no checkpoint" not in second  # said once
    # The sandbox's own /dev and /proc, even when the root's bind holds the host's:
    # nothing says "/dev/null: Permission denied".
    assert "Permission denied" not in first + second, first
    assert "Traceback" not in err
    state = home / ".local" / "state" / "toolhost"
    assert snapshot_objects(state) == 0  # nothing of the root was stored
    assert (home / ".bashrc").read_text() == "# mine\nx\ny\n"
