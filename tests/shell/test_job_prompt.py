"""A job's prompt after input was typed is what the program printed since, never the echo
of that input. A plain command's output comes from its pipe and the echo from its terminal:
the two arrive in either order (under load the program's next prompt often comes first).

The first test feeds a job's two readers from pipes the test writes, in the orders seen, so
the arrival order is fixed instead of left to the kernel; the second shows with real bash
that each source reaches its own sink."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lsp_server.shell import pipes
from lsp_server.shell.confinement import CommandState
from lsp_server.shell.jobs import JobManager
from lsp_server.shell.prompts import Handover
from lsp_server.shell.runner import RunLimits, new_marker
from lsp_server.shell.terminal import CommandInput

pytestmark = pytest.mark.timeout(60)

LIMITS = RunLimits(timeout_seconds=60, kill_grace_seconds=0.5, pipe_wait_seconds=1.0)

# What reaches toolhost for `read -p "Name: " n; read -s -p "Password: " p` once "Ada\n"
# is typed, read by read: "out" is the program's pipe, "echo" its terminal.
ARRIVALS = {
    "echo first": [("echo", b"Ada\n"), ("out", b"Password: ")],
    "prompt first (the failing run)": [("out", b"Password: "), ("echo", b"Ada\n")],
    "echo inside the prompt": [
        ("out", b"Pass"),
        ("echo", b"Ad"),
        ("out", b"word: "),
        ("echo", b"a\n"),
    ],
}


@pytest.fixture
async def manager() -> AsyncIterator[JobManager]:
    manager = JobManager()
    yield manager
    await manager.shutdown()


@pytest.mark.parametrize("order", ARRIVALS)
async def test_the_prompt_after_typed_input_is_the_new_prompt_in_any_arrival_order(
    manager: JobManager, tmp_path: Path, order: str
) -> None:
    out_r, out_w = os.pipe()
    echo_r, echo_w = os.pipe()
    stand_in = await asyncio.create_subprocess_exec("sleep", "60", start_new_session=True)
    stdin = CommandInput(False)
    stdin.started()
    pipe = await pipes._read(stand_in, [out_r, echo_r], lambda _: None, asyncio.Future())
    handover = Handover(
        stand_in, pipe, stdin, CommandState.create(), new_marker(), stand_in.pid, b"Name: "
    )
    job = await manager.adopt(handover, "read; read -s", tmp_path, "s1", LIMITS)
    try:
        assert job.prompt() == "Name:"
        assert job.stdin is not None
        job.stdin.write(b"Ada\n")  # as job_input types it
        for source, data in ARRIVALS[order]:
            end = job.output.end + len(data)
            os.write(out_w if source == "out" else echo_w, data)
            while job.output.end < end:
                assert await job.wait_change(10)
        assert job.prompt() == "Password:"
    finally:
        os.close(out_w)
        os.close(echo_w)
        await manager.kill(job, "test over")
        handover.state.remove()


async def test_a_plain_commands_echo_reaches_its_own_sink(tmp_path: Path) -> None:
    stdin = CommandInput(False)
    said: list[bytes] = []
    echoed: list[bytes] = []
    echo_ended = asyncio.Event()

    def echo(data: bytes) -> None:
        echoed.append(data)
        if b"\n" in data:
            echo_ended.set()

    process, pipe = await pipes.start_process(
        ["bash", "-c", 'read -r -p "Name: " n; echo "hi $n"'],
        tmp_path,
        dict(os.environ),
        said.append,
        None,
        stdin,
        echo,
    )
    try:
        stdin.write(b"Ada\n")
        await process.wait()
        assert await pipe.wait_closed(10)
        await asyncio.wait_for(echo_ended.wait(), 10)  # it may come after the end
        assert b"".join(said) == b"Name: hi Ada\n"
        assert b"".join(echoed) == b"Ada\n"
    finally:
        pipe.close()
        stdin.close()
        if process.returncode is None:
            process.kill()
