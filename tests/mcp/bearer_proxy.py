"""A loopback HTTP proxy that sends every request on to `toolhost mcp --http` with the
server's bearer token, for clients that cannot be given a header (the conformance suite's
CLI has no option for one). It speaks for the server: its own address in `Host` and
`Origin` becomes the server's; every other value (a DNS-rebinding host, a foreign origin)
passes unchanged, so the server's own checks still decide."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class BearerProxy:
    def __init__(self, upstream_port: int, token: str) -> None:
        self.upstream_port = upstream_port
        self.token = token
        self.port = 0
        self._tasks: set[asyncio.Task[None]] = set()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[BearerProxy]:
        listener = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = listener.sockets[0].getsockname()[1]
        try:
            async with listener:
                yield self
        finally:
            for task in list(self._tasks):
                task.cancel()

    def _rewrite(self, head: bytes) -> bytes:
        mine = f"127.0.0.1:{self.port}".encode()
        theirs = f"127.0.0.1:{self.upstream_port}".encode()
        lines = head.split(b"\r\n")
        out = [lines[0], b"Authorization: Bearer " + self.token.encode()]
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() in (b"host", b"origin"):
                line = name + b": " + value.strip().replace(mine, theirs)
            out.append(line)
        return b"\r\n".join(out)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        answers = asyncio.create_task(_pump(up_reader, writer))
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                up_writer.write(self._rewrite(head))
                await _forward_body(head, reader, up_writer)
                await up_writer.drain()
        finally:
            up_writer.close()
            with contextlib.suppress(Exception):
                await answers
            writer.close()
            self._tasks.discard(task)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    writer.close()


async def _forward_body(
    head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(b":") for line in head.split(b"\r\n")[1:])
    }
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        while True:
            size_line = await reader.readuntil(b"\r\n")
            writer.write(size_line)
            size = int(size_line.split(b";")[0], 16)
            writer.write(await reader.readexactly(size + 2))
            if size == 0:
                return
    length = int(headers.get(b"content-length", b"0") or 0)
    if length:
        writer.write(await reader.readexactly(length))
