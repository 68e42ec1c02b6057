"""What the owner of a runtime runs at the end, and what toolhost/status reports: filled by
compose.py as it installs each service."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs

ShutdownHook = Callable[[], Awaitable[None]]
StatusProvider = Callable[[], Any]


@attrs.define
class Lifecycle:
    """What the owner must run at the end, and what toolhost/status reports."""

    shutdown_hooks: list[ShutdownHook] = attrs.Factory(list)
    # Synchronous last resorts (signals, interpreter exit): no orphaned processes.
    kill_hooks: list[Callable[[], None]] = attrs.Factory(list)
    status_providers: dict[str, StatusProvider] = attrs.Factory(dict)

    async def shutdown(self) -> None:
        for hook in self.shutdown_hooks:
            await hook()
