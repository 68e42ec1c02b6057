"""Toolhost's MCP server module (and with it the SDK), imported in a thread once started:
`toolhost mcp`'s front (mcp/stdio/front.py) starts it after the runtime, or when a message needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
from types import ModuleType

from lsp_server.mcp.stdio.fast import Serializer

SERVER_MODULE = "lsp_server.mcp.stdio.stdio_streams"


class Loader:
    """Imports toolhost's MCP server (and with it the SDK) in a thread, once started."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._thread: threading.Thread | None = None
        self._module: ModuleType | None = None
        self._error: BaseException | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._load, name="toolhost-mcp-import", daemon=True
            )
            self._thread.start()

    def _load(self) -> None:
        try:
            self._module = importlib.import_module(SERVER_MODULE)
        except BaseException as exc:  # re-raised on the loop, where the process ends
            self._error = exc
        with self._lock:
            self._done.set()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop has ended
                loop.call_soon_threadsafe(_resolve, future)

    def loaded(self) -> asyncio.Future[None]:
        """Done when the import has ended (this does not start it)."""
        future = asyncio.get_running_loop().create_future()
        with self._lock:
            if self._done.is_set():
                future.set_result(None)
            else:
                self._waiters.append((asyncio.get_running_loop(), future))
        return future

    async def module(self) -> ModuleType:
        self.start()
        await self.loaded()
        if self._error is not None:
            raise self._error
        assert self._module is not None
        return self._module

    async def serializer(self) -> Serializer:
        """The SDK's serializer of tools/call results (for the shapes fast.py does not know)."""
        serialize: Serializer = (await self.module()).serialize_call_result
        return serialize


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
