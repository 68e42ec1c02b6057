"""The shell over the wire: `toolhost serve` as a subprocess driven by pytest-lsp."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.helpers import SERVER_COMMAND, lsp_call, lsp_session, make_test_client, text_of
from tests.shell.procs import is_alive, processes_with_marker, wait_gone, wait_running

pytestmark = pytest.mark.timeout(180)

BYPASS = {"policy": {"mode": "bypass"}}


def server_job_processes(server_pid: int) -> list[int]:
    """Live processes started by that server's commands: their marker begins with its pid."""
    return processes_with_marker(f"{server_pid}-", prefix=True)


async def wait_for_file(path: Path) -> str:
    while not path.exists() or not path.read_text().strip():
        await asyncio.sleep(0.02)
    return path.read_text().strip()


async def test_cancel_request_kills_a_running_command(workspace: Path) -> None:
    async with lsp_session(workspace, BYPASS) as client:
        params = {
            "name": "bash",
            "arguments": {"command": "exec sleep 60.25"},
            "session": "default",
        }
        pending = client.protocol.send_request("toolhost/call", params, msg_id="cancel-me")
        [pid] = await wait_running("sleep", "60.25")
        assert is_alive(pid)
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="cancel-me"))
        # protocol.md: the call stops and its RESULT says cancelled (not a JSON-RPC error).
        result: Any = await asyncio.wrap_future(pending)
        assert result["isError"]
        assert result["error"]["code"] == "cancelled"
        assert text_of(result).startswith("cancelled: the call was cancelled")
        assert await wait_gone([pid], limit_seconds=5) == []


def progress_recording_client() -> LanguageClient:
    client = make_test_client()
    client.progress_values = []  # type: ignore[attr-defined]

    @client.feature(types.PROGRESS)
    def _progress(params: Any) -> None:
        client.progress_values.append(params)  # type: ignore[attr-defined]

    return client


@pytest.mark.slow
async def test_progress_reports_output_lines(workspace: Path) -> None:
    async with lsp_session(
        workspace,
        BYPASS,
        client_factory=progress_recording_client,
        capabilities=types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True)
        ),
    ) as client:
        result = await lsp_call(
            client,
            "bash",
            {"command": "for i in 1 2 3 4; do echo line $i; sleep 0.4; done"},
            workDoneToken="tok-1",
        )
        assert text_of(result).endswith("line 4\n[exit code 0]")
        values = list(client.progress_values)  # type: ignore[attr-defined]
    reports = [
        p.value["message"] for p in values if p.token == "tok-1" and p.value["kind"] == "report"
    ]
    assert reports
    assert all(message.startswith("line ") for message in reports)


def job_update_recording_client() -> LanguageClient:
    client = make_test_client()
    client.job_updates = []  # type: ignore[attr-defined]

    @client.feature("toolhost/jobUpdate")
    def _job_update(params: Any) -> None:
        client.job_updates.append(params)  # type: ignore[attr-defined]

    return client


@asynccontextmanager
async def raw_server(workspace: Path) -> AsyncIterator[LanguageClient]:
    """A server this test disconnects from by closing its stdin (no shutdown request)."""
    config = ClientServerConfig(
        server_command=SERVER_COMMAND,
        client_factory=job_update_recording_client,
        server_env=dict(os.environ),
    )
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options={"toolhost": BYPASS},
        )
    )
    try:
        yield client
    finally:
        server = client._server
        if server is not None and server.returncode is None:
            server.kill()
        await client.stop()  # type: ignore[no-untyped-call]


def _fetch(url: str) -> int:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:
        status: int = response.status
        return status


@pytest.mark.slow
async def test_dev_server_job_and_nothing_left_after_disconnect(workspace: Path) -> None:
    async with raw_server(workspace) as client:
        server = client._server
        assert server is not None
        command = (
            "setsid sleep 300 > /dev/null 2>&1 & exec python3 -m http.server 0 --bind 127.0.0.1"
        )
        # A dev server others reach shares the host's network: sandbox "network".
        started = await lsp_call(
            client, "bash", {"command": command, "run_in_background": True, "sandbox": "network"}
        )
        assert text_of(started).startswith('Started background job "bash-1"')
        waited = await lsp_call(
            client,
            "job_output",
            {"job_id": "bash-1", "wait": True, "timeout_ms": 30_000, "filter": "Serving HTTP"},
        )
        port = int(re.search(r"port (\d+)", text_of(waited)).group(1))  # type: ignore[union-attr]
        assert await anyio.to_thread.run_sync(_fetch, f"http://127.0.0.1:{port}/") == 200
        polled = await lsp_call(
            client, "job_output", {"job_id": "bash-1", "wait": True, "filter": "GET /"}
        )
        assert '"GET / HTTP/1.1" 200' in text_of(polled)
        assert text_of(polled).endswith("[status: running]")

        status = await client.protocol.send_request_async("toolhost/status", {})
        assert [(j["jobId"], j["status"]) for j in status["jobs"]] == [("bash-1", "running")]
        second = await lsp_call(client, "bash", {"command": "sleep 300", "run_in_background": True})
        assert not second["isError"]
        killed = await lsp_call(client, "job_kill", {"job_id": "bash-2"})
        assert text_of(killed).startswith("Killed job bash-2")

        updates = [(u["jobId"], u["status"]) for u in client.job_updates]  # type: ignore[attr-defined]
        assert updates == [("bash-1", "running"), ("bash-2", "running"), ("bash-2", "killed")]

        children = await asyncio.to_thread(server_job_processes, server.pid)
        assert len(children) >= 2  # the http server and the setsid sleeper
        # The client goes away without a shutdown request.
        assert server.stdin is not None
        server.stdin.close()
        await server.wait()
        assert await wait_gone(children) == []
        assert await asyncio.to_thread(server_job_processes, server.pid) == []


async def test_sigterm_to_the_server_stops_its_jobs(workspace: Path) -> None:
    async with raw_server(workspace) as client:
        server = client._server
        assert server is not None
        started = await lsp_call(
            client,
            "bash",
            {"command": "setsid sleep 300 & sleep 300", "run_in_background": True},
        )
        assert not started["isError"]
        children: list[int] = []
        while len(children) < 3:  # bash, its sleep, the setsid sleep
            children = await asyncio.to_thread(server_job_processes, server.pid)
            await asyncio.sleep(0.05)
        server.send_signal(signal.SIGTERM)
        await server.wait()
        assert await wait_gone(children) == []
