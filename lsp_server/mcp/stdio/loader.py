"""Toolhost's MCP server module (and with it the SDK), imported in a thread once started:
`toolhost mcp`'s front (mcp/stdio/front.py) warms it up after the runtime, or starts it when a
message needs it.

Warming up imports the SDK a step at a time (`_STEPS`, each well under a tenth of a second)
and waits between two steps while a tool call runs: the import is 0.6 s of CPU, and beside
the first shell command of a large repository (whose snapshot runs git on both cores) it
made that command 0.25 s slower. A message that needs the SDK ends the waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
from collections.abc import Callable
from types import ModuleType

from lsp_server.mcp.stdio.fast import Serializer

SERVER_MODULE = "lsp_server.mcp.stdio.stdio_streams"
_STEPS = (
    "pydantic",
    "mcp_types._types",
    "mcp_types._v2025_11_25",
    "mcp_types._v2026_07_28",
    "mcp.types",
    "mcp.server.streamable_http",
    "mcp.server.lowlevel",
    "mcp.server.mcpserver",
    "mcp.client",
    "mcp.server.stdio",
    "lsp_server.policy.client_approvals",
)
"""What SERVER_MODULE imports, in order (an SDK that moved one just takes a larger step)."""
_CALL_POLL = 0.05


class Loader:
    """Imports toolhost's MCP server (and with it the SDK) in a thread, once started."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._thread: threading.Thread | None = None
        self._module: ModuleType | None = None
        self._error: BaseException | None = None
        self._urgent = threading.Event()
        self._busy: Callable[[], bool] = lambda: False

    def warm_up(self, busy: Callable[[], bool]) -> None:
        """Start importing, a step at a time, waiting between steps while `busy()` (a tool
        call runs)."""
        self._busy = busy
        self._begin()

    def start(self) -> None:
        """Import now, without waiting for calls (a message needs the SDK)."""
        self._urgent.set()
        self._begin()

    def _begin(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(
                target=self._load, name="toolhost-mcp-import", daemon=True
            )
            self._thread.start()

    def _load(self) -> None:
        try:
            for step in _STEPS:
                while not self._urgent.is_set() and self._busy():
                    self._urgent.wait(_CALL_POLL)
                with contextlib.suppress(ImportError):  # (SERVER_MODULE says what failed)
                    importlib.import_module(step)
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
