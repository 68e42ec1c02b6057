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
    def __init__(self, deliver: Deliver) -> None:
        self._deliver = deliver
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._count = 0
        self._task = asyncio.create_task(self._drain())

    def __call__(self, value: dict[str, Any]) -> None:
        if value.get("kind") == "report":
            self._queue.put_nowait(str(value.get("message") or ""))

    async def _drain(self) -> None:
        while (message := await self._queue.get()) is not None:
            self._count += 1
            try:
                await self._deliver(self._count, message or None)
            except Exception:  # a client that is gone cannot hear progress; the call goes on
                log.debug("progress not delivered", exc_info=True)

    async def close(self) -> None:
        self._queue.put_nowait(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._task, 5)
