"""Runtime progress (a sync callback) as the ordered notifications/progress of one request,
for both MCP paths: the front's fast path writes each one itself, the SDK's handler through
its session. Standard library only: the front loads it before the SDK."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

Deliver = Callable[[int, "str | None"], Awaitable[None]]
"""Sends one notification: (its running count, the message or None)."""


class ProgressRelay:
    """Its queue and the task that drains it are made at the first report: most calls report
    nothing, and every call of a client that sends a progress token (Claude Code, Gemini CLI)
    comes with one. Reports arrive on the loop's thread (runtime/progress.py awaits them).

    On 2026-07-28 a call that asks for approval outlives the request that started it: its
    progress goes to the request that is open for it at the time (`mute` when one is
    answered, `retarget` when the client's retry comes), or nowhere."""

    def __init__(self, deliver: Deliver | None) -> None:
        self._deliver = deliver
        self._queue: asyncio.Queue[str | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._count = 0

    def __call__(self, value: dict[str, Any]) -> None:
        if value.get("kind") != "report" or self._deliver is None:
            return
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._task = asyncio.create_task(self._drain(self._queue))
        self._queue.put_nowait(str(value.get("message") or ""))

    async def _drain(self, queue: asyncio.Queue[str | None]) -> None:
        while (message := await queue.get()) is not None:
            deliver = self._deliver
            if deliver is not None:
                self._count += 1
                try:
                    await deliver(self._count, message or None)
                except Exception:  # a client that is gone cannot hear progress; the call goes on
                    log.debug("progress not delivered", exc_info=True)
            queue.task_done()

    async def mute(self) -> None:
        """What was reported so far is delivered; later reports go nowhere."""
        if self._queue is not None and self._task is not None and not self._task.done():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._queue.join(), 5)
        self._deliver = None

    def retarget(self, deliver: Deliver | None) -> None:
        """Later reports go to `deliver` (a new request's token: its count starts again)."""
        self._deliver = deliver
        self._count = 0

    async def close(self) -> None:
        """What was reported is delivered (before the call's answer), then the relay ends."""
        if self._queue is None or self._task is None:
            return
        self._queue.put_nowait(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._task, 5)

    def abandon(self) -> None:
        if self._task is not None:
            self._task.cancel()
