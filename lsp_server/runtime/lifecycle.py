"""What the owner of a runtime runs at its start and end, and what toolhost/status reports:
filled by compose.py as it installs each service; every face starts, stops and kills a
runtime through these three methods."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

log = logging.getLogger(__name__)

Hook = Callable[[], Awaitable[None]]
ShutdownHook = Hook
StatusProvider = Callable[[], Any]

SHUTDOWN_TIMEOUT = 10.0
"""Seconds each shutdown hook may take: a stuck one must not keep the others from running."""


@attrs.define
class Lifecycle:
    """What the owner must run at the start and at the end, and what toolhost/status reports."""

    start_hooks: list[Hook] = attrs.Factory(list)
    """Run once by `start` (the attach socket: when the face is ready to serve it)."""
    shutdown_hooks: list[ShutdownHook] = attrs.Factory(list)
    # Synchronous last resorts (signals, interpreter exit): no orphaned processes.
    kill_hooks: list[Callable[[], None]] = attrs.Factory(list)
    status_providers: dict[str, StatusProvider] = attrs.Factory(dict)
    _started: bool = attrs.field(default=False, init=False)
    _stopped: bool = attrs.field(default=False, init=False)

    async def start(self) -> None:
        """Run the start hooks, once (a second call does nothing)."""
        if self._started:
            return
        self._started = True
        for hook in self.start_hooks:
            await hook()

    async def shutdown(self, timeout: float = SHUTDOWN_TIMEOUT) -> None:
        """Run every shutdown hook in order, once, each within `timeout` seconds; one that
        fails or times out is logged and the next runs."""
        if self._stopped:
            return
        self._stopped = True
        for hook in self.shutdown_hooks:
            try:
                await asyncio.wait_for(hook(), timeout=timeout)
            except Exception:
                log.exception("shutdown hook failed")

    def kill_now(self) -> None:
        """Run every kill hook (synchronous, no waiting: from a signal handler or at exit);
        one that fails is logged and the next runs."""
        for hook in self.kill_hooks:
            try:
                hook()
            except Exception:
                log.exception("kill hook failed")
