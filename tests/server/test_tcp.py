"""`toolhost serve --tcp`: loopback only, and a token that only its user can read."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _frame(payload: dict[str, object]) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def _initialize(port: int, token: str | None, root: Path) -> dict[str, object] | None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    options = {"toolhost": {"token": token}} if token else {}
    writer.write(
        _frame(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": root.as_uri(),
                    "capabilities": {},
                    "initializationOptions": options,
                },
            }
        )
    )
    await writer.drain()
    try:
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = int(re.search(rb"Content-Length: (\d+)", header).group(1))  # type: ignore[union-attr]
    body = json.loads(await reader.readexactly(length))
    writer.close()
    return body  # type: ignore[no-any-return]


@pytest.mark.slow
async def test_tcp_requires_the_token(tmp_path: Path) -> None:
    port = _free_port()
    state = tmp_path / "state"
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(state)}
    command = [sys.executable, "-m", "lsp_server", "serve", "--tcp", "--port", str(port)]
    command += ["--root", str(tmp_path)]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, env=env, text=True)
    try:
        assert server.stderr is not None
        line = ""
        while "listening on 127.0.0.1" not in line:
            line = await asyncio.to_thread(server.stderr.readline)
            assert line, "server exited before listening"
        token_file = Path(line.rsplit("token in ", 1)[1].strip())
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        for _ in range(50):
            try:
                wrong = await _initialize(port, "wrong", tmp_path)
                break
            except ConnectionRefusedError:
                await asyncio.sleep(0.1)
        assert wrong is None or "error" in wrong
        server.terminate()
        server.wait(10)
        server = subprocess.Popen(command, stderr=subprocess.DEVNULL, env=env)
        old_token = token
        for _ in range(200):
            token = token_file.read_text().strip()
            if token and token != old_token:
                break
            await asyncio.sleep(0.1)
        for _ in range(100):
            try:
                right = await _initialize(port, token, tmp_path)
                break
            except ConnectionRefusedError:
                await asyncio.sleep(0.1)
        assert right is not None and "result" in right
        assert right["result"]["capabilities"]["experimental"]["toolhost"]["protocolVersion"] == 1  # type: ignore[index]
    finally:
        server.terminate()
        server.wait(10)
