"""Six hundred malformed envelopes (tests/fuzz_envelopes.py: lone surrogates, odd ids, huge
values, deep nesting, broken JSON, bytes that are not UTF-8) streamed to `toolhost serve`
over stdio and over TCP: every request with a string or integer id is answered at that id,
and the server is alive at the end."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fuzz_envelopes import envelopes, key, owed

pytestmark = pytest.mark.slow

WAIT = 120  # a generous bound for a busy machine, not a timing assertion
METHODS = [
    "toolhost/tools",
    "toolhost/call",
    "toolhost/status",
    "workspace/symbol",
    "textDocument/hover",
    "$/cancelRequest",
    "workspace/didChangeConfiguration",
    "x/y",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection once the server accepts (it says where before it listens)."""
    for _ in range(WAIT * 10):
        try:
            return await asyncio.open_connection("127.0.0.1", port, limit=64 * 1024 * 1024)
        except ConnectionRefusedError:
            await asyncio.sleep(0.1)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
    length = re.search(rb"Content-Length: (\d+)", header, re.IGNORECASE)
    assert length is not None, header
    message: dict[str, Any] = json.loads(await reader.readexactly(int(length.group(1))))
    return message


async def request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request_id: str, method: str,
    params: Any,
) -> dict[str, Any]:  # fmt: skip
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    writer.write(frame(json.dumps(message).encode()))
    await writer.drain()
    while True:
        reply = await read_message(reader)
        if reply.get("id") == request_id and "method" not in reply:
            return reply


async def fuzz(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, root: Path, token: str = ""
) -> None:
    initialize: dict[str, Any] = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
    if token:
        initialize["initializationOptions"] = {"toolhost": {"token": token}}
    assert "result" in await request(reader, writer, "init", "initialize", initialize)
    writer.write(frame(b'{"jsonrpc":"2.0","method":"initialized","params":{}}'))
    lines = envelopes(METHODS)
    assert len(lines) >= 600

    async def write_all() -> None:
        for envelope in lines:
            writer.write(frame(envelope.line))
            await writer.drain()

    writing = asyncio.create_task(write_all())
    waiting = owed(lines)
    while waiting:
        message = await read_message(reader)  # IncompleteReadError when the server died
        if "id" in message and "method" not in message:
            waiting.discard(key(message["id"]))
    await writing
    tools = await request(reader, writer, "after", "toolhost/tools", {"surface": "core"})
    assert tools["result"]["tools"], tools


async def test_lsp_over_stdio_answers_six_hundred_malformed_envelopes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lsp_server", "serve",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, cwd=root, limit=64 * 1024 * 1024,
        env={**os.environ, "TOOLHOST_STATE_DIR": str(tmp_path / "state")},
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    try:
        await fuzz(process.stdout, process.stdin, root)  # type: ignore[arg-type]
        assert process.returncode is None
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), WAIT)
        except TimeoutError:
            process.kill()
            await process.wait()


@pytest.mark.slow
async def test_lsp_over_tcp_answers_six_hundred_malformed_envelopes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lsp_server", "serve", "--tcp", "--port", str(free_port()),
        "--root", str(root),
        stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
        env={**os.environ, "TOOLHOST_STATE_DIR": str(tmp_path / "state")},
    )  # fmt: skip
    assert process.stderr is not None
    try:
        line = ""
        while "listening on 127.0.0.1" not in line:
            line = (await asyncio.wait_for(process.stderr.readline(), WAIT)).decode()
            assert line, "the server ended before listening"
        port = int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1))  # type: ignore[union-attr]
        token = Path(line.rsplit("token in ", 1)[1].strip()).read_text().strip()
        draining = asyncio.create_task(process.stderr.read())  # its log of every refusal
        reader, writer = await connect(port)
        try:
            await fuzz(reader, writer, root, token)
        finally:
            writer.close()
        assert process.returncode is None
    finally:
        process.terminate()
        await process.wait()
    await draining
