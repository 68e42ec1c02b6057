"""SIGKILL of `toolhost serve`: nothing it started survives it (checked in /proc, polled
against a deadline). Sandboxed commands die with their PID namespace (bwrap's
--die-with-parent); the language server gets a parent-death signal."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.helpers import SERVER_COMMAND, lsp_call, make_test_client
from tests.langservers.conftest import copy_fixture, require_server
from tests.shell.procs import is_alive, pids_running, wait_running

pytestmark = pytest.mark.timeout(180)


def _children_named(parent: int, name: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == parent and name in comm and is_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


async def _until_gone(pids: list[int], limit_seconds: float = 20.0) -> list[int]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_seconds
    while (alive := [p for p in pids if is_alive(p)]) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return alive


async def test_sigkill_of_the_server_leaves_nothing_running(tmp_path: Path, bwrap: str) -> None:
    root = copy_fixture("c", tmp_path)
    require_server("c", root)
    env = dict(os.environ, TOOLHOST_STATE_DIR=str(tmp_path / "state"))
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=make_test_client, server_env=env
    )
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="c")],
            )
        )
        server = client._server
        assert server is not None
        # Default policy: sandboxed commands run without asking (no approver here).
        job = await lsp_call(client, "bash", {"command": "sleep 313.1", "run_in_background": True})
        assert not job["isError"], job
        daemon = {
            "command": "env -i setsid sleep 313.2 >/dev/null 2>&1 & sleep 313.3",
            "run_in_background": True,
        }
        assert not (await lsp_call(client, "bash", daemon))["isError"]
        foreground = client.protocol.send_request(
            "toolhost/call",
            {"name": "bash", "arguments": {"command": "sleep 313.4"}, "session": "default"},
        )
        hover = await lsp_call(client, "lsp_diagnostics", {"path": "bad.c"})
        assert not hover["isError"], hover
        names = ("313.1", "313.2", "313.3", "313.4")
        sleepers = [pid for n in names for pid in await wait_running("sleep", n)]
        assert len(sleepers) == 4
        clangd = _children_named(server.pid, "clangd")
        assert clangd, "clangd should be running as a child of the server"

        server.kill()
        await server.wait()
        assert await _until_gone(sleepers + clangd) == []
        assert [pids_running("sleep", n) for n in names] == [[], [], [], []]
        foreground.cancel()
    finally:
        await client.stop()  # type: ignore[no-untyped-call]
