"""A server closing while its checkpoints are trimmed: the repack after a home folder's
first snapshot took minutes, and the server waited for it at shutdown (its client killed
it 10 s after closing its stdin). Shutting down now waits for the writers' queue only; the
trim runs on a daemon thread, which the interpreter does not wait for, and its git ends
with the server."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from lsp_server.procs.daemon_threads import on_daemon_thread
from tests.checkpoints.test_engine import engine

HANG_GUARD = 60.0  # (not a speed limit: without the change, shutting down waits forever)


async def test_shutting_down_leaves_a_trim_under_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a")
    checkpoints, _ = engine(root, tmp_path / "state")
    started, release = threading.Event(), threading.Event()
    trims: list[threading.Thread] = []

    def slow_trim(trimmed: Path, measure: bool = True) -> int:
        trims.append(threading.current_thread())
        with checkpoints.root_lock(trimmed):  # (as a real trim: the root is its own)
            started.set()
            release.wait(HANG_GUARD)
        return 0

    monkeypatch.setattr(checkpoints, "trim_root", slow_trim)
    try:
        window = await checkpoints.before_command("c-1", "s", "bash", "echo b > b.txt")
        (root / "b.txt").write_text("b")
        await checkpoints.after_command(window)  # (the first command's trim starts)
        assert await asyncio.to_thread(started.wait, HANG_GUARD)
        await asyncio.wait_for(checkpoints.settle(shutting_down=True), HANG_GUARD)
        assert trims and trims[0].daemon
        assert not release.is_set()  # (it was still trimming)
    finally:
        release.set()


async def test_work_on_a_daemon_thread_answers_or_raises() -> None:
    assert await on_daemon_thread(lambda: 6 * 7, "answer") == 42

    def fails() -> int:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        await on_daemon_thread(fails, "failure")


async def test_a_cancelled_wait_abandons_the_work() -> None:
    release = threading.Event()
    waiting = asyncio.ensure_future(on_daemon_thread(lambda: release.wait(HANG_GUARD), "left"))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    release.set()  # (its answer, later, goes nowhere)
