"""One side of the proxy (the editor or the agent): messages written in order, and the
requests toolhost itself sends there, with ids of their own (`toolhost-N`, never an id the
other side's own requests use: those pass through unchanged)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import Any

from lsp_server.acp.ndjson import Message, encode

log = logging.getLogger(__name__)

ID_PREFIX = "toolhost-"


class PeerError(Exception):
    """The peer answered one of toolhost's requests with a JSON-RPC error."""

    def __init__(self, error: Any) -> None:
        message = error.get("message") if isinstance(error, dict) else None
        super().__init__(str(message) if message else repr(error))
        self.error = error


class PeerGone(Exception):
    """The peer's stream closed before it answered."""


class Peer:
    def __init__(self, name: str, writer: asyncio.StreamWriter | None) -> None:
        self.name = name
        self._writer = writer
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self.closed = writer is None

    async def send(self, message: Message) -> bool:
        """Write one message; False when the peer is gone (nothing is raised)."""
        if self.closed or self._writer is None:
            return False
        data = encode(message)
        async with self._lock:
            try:
                self._writer.write(data)
                await self._writer.drain()
            except (ConnectionError, OSError, RuntimeError) as exc:
                log.info("%s: cannot write (%s)", self.name, exc)
                self.close()
                return False
        return True

    async def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        """Ask the peer; its result, PeerError for an error answer, PeerGone, TimeoutError."""
        request_id = f"{ID_PREFIX}{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            if not await self.send(message):
                raise PeerGone(f"{self.name} is gone")
            return await asyncio.wait_for(future, timeout)
        finally:
            self._waiting.pop(request_id, None)

    def answer(self, message: Message) -> bool:
        """Take a response to one of toolhost's requests; False when it is not one."""
        request_id = message.get("id")
        if not isinstance(request_id, str) or request_id not in self._waiting:
            return False
        future = self._waiting[request_id]
        if not future.done():
            if "error" in message:
                future.set_exception(PeerError(message["error"]))
            else:
                future.set_result(message.get("result"))
        return True

    def close(self) -> None:
        """The stream ended: every request still waiting fails with PeerGone."""
        self.closed = True
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(PeerGone(f"{self.name} went away"))
        if self._writer is not None:
            with contextlib.suppress(OSError, RuntimeError):
                self._writer.close()
