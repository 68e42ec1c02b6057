"""A raw stdio peer for `toolhost serve`: writes arbitrary bytes (malformed framing, odd
JSON) and reads what comes back, message by message. pytest-lsp cannot send malformed
messages, so the transport tests speak bytes."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "lsp_server", "serve"]


def frame(message: dict[str, Any] | bytes) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawPeer:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.messages: list[dict[str, Any]] = []
        self._arrived = asyncio.Condition()
        self._reader = asyncio.create_task(self._read_all())
        self._stderr = asyncio.create_task(self._drain_stderr())
        self.stderr = b""
        self.next_id = 1000
        self.root = Path()
        self._taken: set[Any] = set()  # ids of server requests already handed out

    @classmethod
    async def start(
        cls,
        root: Path,
        state: Path,
        capabilities: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
    ) -> RawPeer:
        """`capabilities`: the client's; `options`: initializationOptions.toolhost."""
        env = {**os.environ, "TOOLHOST_STATE_DIR": str(state)}
        process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=root,
        )
        peer = cls(process)
        peer.root = root
        await peer.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": capabilities or {},
                "initializationOptions": {"toolhost": options or {}},
            },
        )
        await peer.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return peer

    async def _read_all(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = None
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None, "a reply without Content-Length"
            message = json.loads(await stdout.readexactly(length))
            async with self._arrived:
                self.messages.append(message)
                self._arrived.notify_all()

    async def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(1 << 16):
            self.stderr += chunk

    async def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def send(self, message: dict[str, Any] | bytes) -> None:
        await self.write(frame(message))

    async def reply_to(self, msg_id: Any, wait_seconds: float = 30) -> dict[str, Any]:
        """The response with this id (a generous bound, not a timing assertion)."""
        return (await self.replies_to(msg_id, 1, wait_seconds))[0]

    async def replies_to(
        self, msg_id: Any, count: int, wait_seconds: float = 30
    ) -> list[dict[str, Any]]:
        """The first `count` responses with this id (for id null, which several can share)."""

        def replies() -> list[dict[str, Any]]:
            return [
                m for m in self.messages if "id" in m and m["id"] == msg_id and "method" not in m
            ]

        async with self._arrived:
            await asyncio.wait_for(
                self._arrived.wait_for(lambda: len(replies()) >= count), wait_seconds
            )
        return replies()[:count]

    async def request_from_server(self, method: str, wait_seconds: float = 30) -> dict[str, Any]:
        """The next request the server sent with this method (once each)."""

        def pending() -> list[dict[str, Any]]:
            return [
                m
                for m in self.messages
                if m.get("method") == method and "id" in m and m["id"] not in self._taken
            ]

        async with self._arrived:
            await asyncio.wait_for(self._arrived.wait_for(pending), wait_seconds)
        request = pending()[0]
        self._taken.add(request["id"])
        return request

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        msg_id = self.next_id
        await self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await self.reply_to(msg_id)

    async def still_serving(self) -> None:
        reply = await self.request("toolhost/tools", {"surface": "core"})
        assert "result" in reply and reply["result"]["tools"], reply

    def logged(self) -> list[str]:
        """What the server told the client through window/logMessage."""
        return [
            str(m["params"]["message"])
            for m in self.messages
            if m.get("method") == "window/logMessage"
        ]

    async def close(self) -> int:
        if self.process.returncode is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), 30)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        await self._reader
        await self._stderr
        assert self.process.returncode is not None
        return self.process.returncode
