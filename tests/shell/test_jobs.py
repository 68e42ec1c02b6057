"""Background jobs on their own: a real HTTP server on 127.0.0.1, real processes."""

from __future__ import annotations

import asyncio
import re
import sys
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from lsp_server.shell.jobs import JobManager
from lsp_server.shell.runner import RunLimits
from tests.shell.procs import processes_with_marker, wait_gone

LIMITS = RunLimits(timeout_seconds=60, kill_grace_seconds=1.0, pipe_wait_seconds=1.0)
SERVER = f"{sys.executable} -m http.server 0 --bind 127.0.0.1"


@pytest.fixture
async def manager() -> AsyncIterator[JobManager]:
    manager = JobManager()
    yield manager
    await manager.shutdown()


def _fetch(url: str) -> int:
    with urllib.request.urlopen(url, timeout=10) as response:
        status: int = response.status
        return status


@pytest.mark.timeout(60)
async def test_dev_server_job_polled_filtered_waited_and_killed(
    manager: JobManager, tmp_path: Path
) -> None:
    updates: list[dict[str, Any]] = []

    async def notify(params: dict[str, Any]) -> None:
        updates.append(params)

    job = await manager.start(SERVER, tmp_path, "s1", LIMITS, notify)
    assert job.id == "bash-1"
    assert updates[0] == {"jobId": "bash-1", "session": "s1", "status": "running", "newBytes": 0}

    listening = re.compile(r"Serving HTTP on \S+ port (\d+)")
    assert await manager.wait(job, "s1", 30, listening)
    first = manager.read(job, "s1", listening)
    assert first.matched_lines == 1
    match = listening.search(first.text)
    assert match is not None
    port = int(match.group(1))

    assert await anyio.to_thread.run_sync(_fetch, f"http://127.0.0.1:{port}/") == 200
    request_line = re.compile(r'"GET / HTTP')
    assert await manager.wait(job, "s1", 30, request_line)
    polled = manager.read(job, "s1", request_line)
    assert polled.matched_lines == 1
    # Nothing new since: the cursor moved past the request line.
    assert manager.read(job, "s1").text == ""
    # Another session has its own cursor and sees everything.
    assert "Serving HTTP" in manager.read(job, "s2").text

    # A wait without a pattern times out while the job keeps running.
    assert not await manager.wait(job, "s1", 0.2, None)
    assert job.running

    pid = job.pid
    assert pid is not None
    assert await manager.kill(job, "test")
    assert job.status == "killed"
    assert job.status_line() == "[status: killed]"
    assert await wait_gone([pid]) == []
    assert not await manager.kill(job, "again")
    assert updates[-1]["status"] == "killed"
    assert [job_view["jobId"] for job_view in manager.status()] == ["bash-1"]


async def test_job_exit_code_and_status_line(manager: JobManager, tmp_path: Path) -> None:
    job = await manager.start("echo done; exit 7", tmp_path, "s1", LIMITS)
    assert await manager.wait(job, "s1", 30, None)
    assert job.status_line() == "[status: exited 7]"
    assert manager.read(job, "s1").text == "done\n"


@pytest.mark.timeout(60)
async def test_job_leftovers_are_killed_when_it_ends(manager: JobManager, tmp_path: Path) -> None:
    job = await manager.start("sleep 100 & echo $!", tmp_path, "s1", LIMITS)
    assert await manager.wait(job, "s1", 30, None)
    pid = int(manager.read(job, "s1").text)
    assert "killed 1 process" in job.note
    assert await wait_gone([pid]) == []


@pytest.mark.timeout(60)
async def test_closing_a_session_kills_its_jobs_only(manager: JobManager, tmp_path: Path) -> None:
    mine = await manager.start("setsid sleep 100 & sleep 100", tmp_path, "s1", LIMITS)
    other = await manager.start("sleep 100", tmp_path, "s2", LIMITS)
    await asyncio.sleep(0)
    await manager.close_session("s1")
    assert mine.status == "killed"
    assert other.running
    assert await asyncio.to_thread(processes_with_marker, mine.marker) == []
    await manager.shutdown()
    assert other.status == "killed"
    assert await asyncio.to_thread(processes_with_marker, other.marker) == []


@pytest.mark.timeout(60)
async def test_dropped_output_is_counted_for_a_slow_reader(tmp_path: Path) -> None:
    manager = JobManager()
    limits = RunLimits(timeout_seconds=60, capture_bytes=1000)
    job = await manager.start("head -c 5000 /dev/zero | tr '\\0' x", tmp_path, "s1", limits)
    assert await manager.wait(job, "s1", 30, None)
    read = manager.read(job, "s1")
    assert read.dropped_bytes + len(read.text) == 5000
    assert read.dropped_bytes > 0
