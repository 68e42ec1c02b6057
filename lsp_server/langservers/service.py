"""Wiring for the server: the manager as a service, its shutdown hook and status rows.

server.py calls `install(...)` once per runtime; nothing here imports the server module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from lsp_server.config import LspConfig
from lsp_server.langservers.manager import LanguageServerManager
from lsp_server.runtime.context import Services


def install(
    services: Services,
    config: LspConfig,
    shutdown_hooks: list[Callable[[], Awaitable[None]]],
    status_providers: dict[str, Callable[[], Any]],
) -> None:
    """Register the manager (created on the first lsp_* call), stop its children on
    shutdown, and list them in toolhost/status as `languageServers`."""
    services.register_factory(LanguageServerManager, lambda: LanguageServerManager(config))

    def created() -> LanguageServerManager | None:
        found = [s for s in services.all() if isinstance(s, LanguageServerManager)]
        return found[0] if found else None

    async def stop_language_servers() -> None:
        manager = created()
        if manager is not None:
            await manager.shutdown()

    def status() -> list[dict[str, Any]]:
        manager = created()
        return manager.status() if manager is not None else []

    shutdown_hooks.append(stop_language_servers)
    status_providers["languageServers"] = status
