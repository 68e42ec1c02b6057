"""rg_drain: rg's output read on the event loop at exit (a pidfd) and on a timer, not chunk
by chunk; the deadline and a cancellation still end the process; without a pidfd every
chunk is read."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from lsp_server.search import rg_drain, ripgrep
from lsp_server.search.query import SearchQuery


def spawn(script: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )


async def run(script: str, seconds: float = 30.0) -> tuple[bytes, bytes, bool, int]:
    proc = spawn(script)
    out: list[bytes] = []
    err: list[bytes] = []
    try:
        with proc:
            timed_out = await rg_drain.drain(proc, out.append, err, seconds)
            proc.wait()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # what it left in the background
    return b"".join(out), b"".join(err), timed_out, proc.returncode


@pytest.fixture(params=["pidfd", "each chunk"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "each chunk":

        def no_pidfd(pid: int) -> int:
            raise OSError(38, "Function not implemented")

        monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    return str(request.param)


async def test_output_over_the_pipe_size_arrives_whole(way: str) -> None:
    """3 MiB through a 1 MiB pipe, with stderr beside it: nothing lost, nothing hangs."""
    out, err, timed_out, code = await run(
        "head -c 3145728 /dev/zero | tr '\\0' x; printf 'warning' >&2; printf end"
    )
    assert out == b"x" * 3145728 + b"end" and err == b"warning"
    assert (timed_out, code) == (False, 0)


async def test_the_deadline_kills_and_says_so(way: str) -> None:
    out, _, timed_out, code = await run("printf started; exec sleep 30", seconds=0.3)
    assert out == b"started" and timed_out is True and code == -9


async def test_a_cancellation_kills(way: str) -> None:
    proc = spawn("printf started; exec sleep 30")
    with proc:
        task = asyncio.create_task(rg_drain.drain(proc, lambda _: None, [], 30.0))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert proc.wait(timeout=10) == -9


SIX_MIB_IN_SLICES = "for i in 1 2 3 4 5 6; do head -c 1048576 /dev/zero; sleep 0.05; done"


async def test_the_loop_answers_while_output_streams(way: str) -> None:
    """A search with a big output is read in slices: other callbacks run between them."""
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        out, _, _, _ = await run(SIX_MIB_IN_SLICES)
    finally:
        ticker.cancel()
    assert len(out) == 6 * 1048576 and ticks > 20


async def test_an_exited_process_is_read_without_waiting_for_its_pipes_to_close() -> None:
    """A process forked meanwhile may hold the pipe's write end (here: a background
    sleep): the pidfd says the searcher has exited, and what it wrote is read at once."""
    out, _, timed_out, code = await run("sleep 30 & printf done", seconds=20)
    assert (out, timed_out, code) == (b"done", False, 0)


async def test_a_search_with_many_matches_finds_every_line(tmp_path: Path) -> None:
    """The engine through the drain: 200,000 matching lines (about 5 MiB of records)."""
    rg = ripgrep.find_ripgrep()
    assert rg is not None
    for index in range(4):
        (tmp_path / f"f{index}.txt").write_text("".join(f"match {n}\n" for n in range(50_000)))
    outcome = await ripgrep.search(rg, SearchQuery("match", target=tmp_path, ignore_base=tmp_path))
    assert sorted(hits.path for hits in outcome.files) == [f"f{i}.txt" for i in range(4)]
    assert all(hits.matched_lines == 50_000 for hits in outcome.files)
    assert [line.number for line in outcome.files[0].lines] == list(range(1, 50_001))


async def test_each_result_file_is_told_once_while_its_records_are_read(tmp_path: Path) -> None:
    """`on_file` hears every file with results, once, before the search returns (grep's
    secret and hard-link checks run there, beside rg, instead of after it)."""
    rg = ripgrep.find_ripgrep()
    assert rg is not None
    for index in range(30):
        (tmp_path / f"d{index % 3}").mkdir(exist_ok=True)
        (tmp_path / f"d{index % 3}" / f"f{index}.txt").write_text("match\n" * 2000)
    told: list[str] = []
    query = SearchQuery("match", target=tmp_path, ignore_base=tmp_path, on_file=told.append)
    outcome = await ripgrep.search(rg, query)
    assert sorted(told) == sorted(hits.path for hits in outcome.files)
    assert len(told) == 30


def test_a_killed_searcher_that_does_not_go_is_reaped_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A killed rg stuck in the kernel (here: a kill that does nothing) blocks the loop for
    at most half a second; a thread of its own reaps it once it goes."""
    proc = spawn("exec sleep 30")
    monkeypatch.setattr(proc, "kill", lambda: None)
    try:
        assert ripgrep._reap(proc) is None
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
    for _ in range(100):
        if proc.returncode is not None:
            break
        time.sleep(0.05)
    assert proc.returncode == -9
