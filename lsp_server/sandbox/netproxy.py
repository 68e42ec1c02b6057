"""The network proxy of sandboxed commands: HTTP CONNECT and plain HTTP over a Unix socket
that the sandbox binds in (forwarder.py relays to it from inside).

One proxy per command, on the server's event loop, for as long as the command runs. It
decides each connection by `shell.sandbox_network_allow` (netallow.py): names are checked
before they are resolved and resolved here, never by the command; every refusal is kept,
so the command's result can name what was blocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import socket
import tempfile
from pathlib import Path

from lsp_server.sandbox.forwarder import origin_form, parse_head
from lsp_server.sandbox.netallow import NetworkAllowList, blocked_line

log = logging.getLogger(__name__)

_HEAD_LIMIT = 65536
_CONNECT_SECONDS = 10.0
SOCKET_NAME = "proxy.sock"


class NetworkProxy:
    def __init__(self, allow: NetworkAllowList) -> None:
        self.allow = allow
        self.blocked: list[str] = []
        """One line per refused connection, in order, without repeats."""
        self.folder = Path(tempfile.mkdtemp(prefix="toolhost-net-"))
        self.socket_path = self.folder / SOCKET_NAME
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> NetworkProxy:
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.socket_path))
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        shutil.rmtree(self.folder, ignore_errors=True)

    async def __aenter__(self) -> NetworkProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _block(self, host: str, port: int, reason: str) -> str:
        line = blocked_line(host, port, reason)
        if line not in self.blocked:
            self.blocked.append(line)
        return line

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > _HEAD_LIMIT:
            return
        request = parse_head(head)
        if request is None:
            await _reply(writer, 400, "toolhost's sandbox proxy speaks HTTP CONNECT and plain HTTP")
            return
        method, host, port, path = request
        reason = self.allow.refusal(host, port)
        addresses: list[str] = []
        if reason is None:
            addresses, reason = self.allow.usable(host, port, await _resolve(host, port))
        if reason is not None:
            await _reply(writer, 403, self._block(host, port, reason))
            return
        upstream = await _connect(addresses, port)
        if upstream is None:
            await _reply(
                writer, 502, f"toolhost's sandbox proxy could not connect to {host}:{port}"
            )
            return
        up_reader, up_writer = upstream
        try:
            if method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                up_writer.write(origin_form(_without_proxy_headers(head), path))
            await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))
        finally:
            up_writer.close()


def _without_proxy_headers(head: bytes) -> bytes:
    lines = head.split(b"\r\n")
    kept = [
        ln
        for ln in lines
        if not ln.lower().startswith((b"proxy-connection:", b"proxy-authorization:"))
    ]
    return b"\r\n".join(kept)


async def _resolve(host: str, port: int) -> list[str]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def _connect(
    addresses: list[str], port: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    for address in addresses:
        try:
            return await asyncio.wait_for(asyncio.open_connection(address, port), _CONNECT_SECONDS)
        except (OSError, TimeoutError):
            continue
    return None


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        pass


async def _reply(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = (f"toolhost sandbox: {text}\n").encode()
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()
