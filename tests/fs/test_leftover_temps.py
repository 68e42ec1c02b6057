"""A write killed in the middle leaves its temp file; the next `toolhost serve` removes it,
and nothing that is not a dead toolhost writer's own temp file (issue 17, 9d)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_server.fs.leftover_temps import SUFFIX, process_start, temp_name
from tests.helpers import lsp_session
from tests.server.raw_wire import SERVER, RawPeer

pytestmark = pytest.mark.timeout(120)

BYPASS = {"policy": {"mode": "bypass"}}


async def start_server(root: Path, state: Path, env: dict[str, str]) -> RawPeer:
    process = await asyncio.create_subprocess_exec(
        *SERVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "TOOLHOST_STATE_DIR": str(state), **env},
        cwd=root,
    )
    peer = RawPeer(process)
    params = {
        "processId": None,
        "rootUri": root.as_uri(),
        "capabilities": {},
        "initializationOptions": {"toolhost": BYPASS},
    }
    await peer.request("initialize", params)
    await peer.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return peer


async def wait_for(path: Path, seconds: float = 60) -> None:
    """Until `path` exists (a generous bound, not a timing assertion)."""
    async with asyncio.timeout(seconds):
        while not path.exists():
            await asyncio.sleep(0.02)


async def killed_in_the_middle_of_a_write(root: Path, state: Path, marker: Path) -> Path:
    """SIGKILL `toolhost serve` while its write_file has a full temp file on disk."""
    peer = await start_server(root, state, {"TOOLHOST_TEST_STALL_WRITES": str(marker)})
    arguments = {"path": "pkg/big.txt", "content": "x" * 3_000_000}
    params = {"name": "write_file", "arguments": arguments, "session": "s"}
    await peer.send({"jsonrpc": "2.0", "id": 1, "method": "toolhost/call", "params": params})
    await wait_for(marker)
    peer.process.send_signal(signal.SIGKILL)
    await peer.process.wait()
    [temp] = [p for p in (root / "pkg").iterdir() if p.name.endswith(SUFFIX)]
    assert temp.name.startswith(f".big.txt.{peer.process.pid}-")
    assert temp.stat().st_size == 3_000_000
    assert not (root / "pkg" / "big.txt").exists()
    return temp


def decoys(root: Path, outside: Path) -> list[Path]:
    """Files a sweep must leave alone: near names, a live owner, symlinks, other users."""
    alive = f"{os.getpid()}-{process_start(os.getpid())}"
    names = [
        "notes.toolhost-tmp",  # no dot, no owner
        ".notes.txt.4a3b2c1d.toolhost-tmp",  # no pid-start part
        ".notes.txt.99999999-12.4a3b2c1d.toolhost-tmp.bak",
        ".notes.txt.99999999-12.4A3B2C1D.toolhost-tmp",  # not toolhost's hex
        f".notes.txt.{alive}.4a3b2c1d.toolhost-tmp",  # its writer is running
    ]
    made = []
    for name in names:
        (root / name).write_text("the user's\n")
        made.append(root / name)
    target = outside / "precious.txt"
    target.write_text("outside\n")
    link = root / ".link.99999999-12.4a3b2c1d.toolhost-tmp"
    link.symlink_to(target)  # a symlink named like a dead writer's temp: not a regular file
    (outside / "nested").mkdir()
    inside_link = outside / "nested" / ".x.99999999-12.4a3b2c1d.toolhost-tmp"
    inside_link.write_text("reached only through a symlinked folder\n")
    (root / "linked-folder").symlink_to(outside / "nested")
    made += [link, target, inside_link]
    if os.geteuid() == 0:  # a file of another user, named like a dead writer's temp
        foreign = root / ".other.99999999-12.4a3b2c1d.toolhost-tmp"
        foreign.write_text("another user's\n")
        os.chown(foreign, 65534, 65534)
        made.append(foreign)
    return made


async def status_when_swept(client: Any) -> dict[str, Any]:
    async with asyncio.timeout(60):
        while True:
            status: dict[str, Any] = await client.protocol.send_request_async("toolhost/status", {})
            if status["leftoverTemps"]["done"]:
                return status
            await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_a_killed_writes_temp_file_is_removed_at_the_next_start(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    state = tmp_path / "state"
    temp = await killed_in_the_middle_of_a_write(root, state, tmp_path / "stalled")
    kept = decoys(root, outside)
    async with lsp_session(root, BYPASS, state_dir=state) as client:
        status = await status_when_swept(client)
    assert not temp.exists()
    assert status["leftoverTemps"]["removed"] == 1
    assert status["leftoverTemps"]["freedBytes"] == 3_000_000
    for path in kept:
        assert path.is_symlink() or path.is_file(), path
    assert (outside / "precious.txt").read_text() == "outside\n"


def test_temp_names_fit_and_name_their_owner() -> None:
    name = temp_name("n" * 250)
    assert len(name.encode()) < 255
    assert f".{os.getpid()}-{process_start(os.getpid())}." in name
    # Bytes count, not characters: 84 CJK characters are a 252-byte name.
    wide = temp_name("名" * 84)
    assert len(os.fsencode(wide)) < 255 and wide.endswith(".toolhost-tmp")


def test_a_forked_child_names_its_own_temp_files() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report the name it would use, then leave at once
        os.write(write, temp_name("f").encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child_name = os.read(read, 4096).decode()
    os.close(read)
    assert f".f.{pid}-" in child_name, (child_name, sys.platform)
