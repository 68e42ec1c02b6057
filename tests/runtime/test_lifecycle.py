"""Lifecycle: what every face runs at a runtime's start and end. One shutdown runs every
hook in order, each within one timeout, once; a hook that fails or hangs is logged and the
next runs; the kill hooks (signals, exit) likewise; the start hooks run once."""

from __future__ import annotations

import asyncio
import logging

import pytest

from lsp_server.runtime.lifecycle import Lifecycle


async def test_shutdown_runs_every_hook_once_past_a_failing_or_stuck_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []
    never = asyncio.Event()

    async def first() -> None:
        ran.append("first")

    async def fails() -> None:
        ran.append("fails")
        raise RuntimeError("boom")

    async def stuck() -> None:
        ran.append("stuck")
        await never.wait()

    async def last() -> None:
        ran.append("last")

    lifecycle = Lifecycle(shutdown_hooks=[first, fails, stuck, last])
    with caplog.at_level(logging.ERROR, logger="lsp_server.runtime.lifecycle"):
        await lifecycle.shutdown(timeout=0.05)
        await lifecycle.shutdown(timeout=0.05)  # on shutdown, then exit: once
    assert ran == ["first", "fails", "stuck", "last"]
    assert [r.getMessage() for r in caplog.records] == ["shutdown hook failed"] * 2


def test_kill_now_runs_every_hook_past_a_failing_one(caplog: pytest.LogCaptureFixture) -> None:
    ran: list[str] = []

    def fails() -> None:
        ran.append("fails")
        raise OSError("gone")

    lifecycle = Lifecycle(kill_hooks=[fails, lambda: ran.append("next")])
    with caplog.at_level(logging.ERROR, logger="lsp_server.runtime.lifecycle"):
        lifecycle.kill_now()
    assert ran == ["fails", "next"]
    assert [r.getMessage() for r in caplog.records] == ["kill hook failed"]


async def test_start_runs_its_hooks_once() -> None:
    ran: list[str] = []

    async def start() -> None:
        ran.append("start")

    lifecycle = Lifecycle(start_hooks=[start])
    await lifecycle.start()
    await lifecycle.start()  # a runtime built early, then `initialized`: one socket
    assert ran == ["start"]
