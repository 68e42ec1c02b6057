"""`toolhost serve --tcp` with two raw socket clients on 127.0.0.1: every connection proves
the token itself, one editor connection is served, anything else gets only a refusal."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def frame(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize(token: str | None, root: Path, msg_id: int = 1) -> bytes:
    options = {"toolhost": {"token": token}} if token is not None else {}
    params = {
        "processId": None,
        "rootUri": root.as_uri(),
        "capabilities": {},
        "initializationOptions": options,
    }
    return frame({"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params})


def tools_request(msg_id: int) -> bytes:
    return frame({"jsonrpc": "2.0", "id": msg_id, "method": "toolhost/tools", "params": {}})


@attrs.define
class Conn:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def receive(self, seconds: float = 30) -> dict[str, Any] | None:
        """The next message, or None when the server closed the connection."""
        try:
            header = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), seconds)
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        length = int(re.search(rb"Content-Length: (\d+)", header).group(1))  # type: ignore[union-attr]
        message: dict[str, Any] = json.loads(await self.reader.readexactly(length))
        return message

    async def response(self, msg_id: int) -> dict[str, Any] | None:
        """The response to `msg_id`, skipping notifications; None when closed."""
        while True:
            message = await self.receive()
            if message is None or message.get("id") == msg_id:
                return message

    async def closed(self) -> bool:
        """True when the server ends the connection (after at most a refusal)."""
        rest = await asyncio.wait_for(self.reader.read(), 30)
        return b'"result"' not in rest


async def connect(port: int) -> Conn:
    for _ in range(200):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            return Conn(reader, writer)
        except ConnectionRefusedError:
            await asyncio.sleep(0.05)
    raise AssertionError("the server never listened")


@attrs.define
class TcpServer:
    process: subprocess.Popen[str]
    port: int
    token_file: Path

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()


@asynccontextmanager
async def tcp_server(tmp_path: Path) -> AsyncIterator[TcpServer]:
    port = free_port()
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(state)}
    command = [sys.executable, "-m", "lsp_server", "serve", "--tcp", "--port", str(port)]
    command += ["--root", str(tmp_path)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, env=env, text=True)
    try:
        assert process.stderr is not None
        line = ""
        while "listening on 127.0.0.1" not in line:
            line = await asyncio.to_thread(process.stderr.readline)
            assert line, "server exited before listening"
        token_file = Path(line.rsplit("token in ", 1)[1].strip())
        yield TcpServer(process, port, token_file)
    finally:
        process.terminate()
        process.wait(10)


async def test_a_second_connection_is_refused_and_sees_nothing(tmp_path: Path) -> None:
    async with tcp_server(tmp_path) as server:
        editor = await connect(server.port)
        await editor.send(initialize(server.token, tmp_path))
        ready = await editor.response(1)
        assert ready is not None and "result" in ready
        # No token at all: a tool listing straight away, then an initialize without one.
        for first in (
            tools_request(7),
            initialize(None, tmp_path, 7),
            initialize("x", tmp_path, 7),
        ):
            intruder = await connect(server.port)
            await intruder.send(first)
            refusal = await intruder.receive()
            assert refusal is not None and "result" not in refusal
            assert refusal["error"]["message"].startswith("toolhost: refused")
            assert await intruder.closed()
        # The right token, but an editor is already connected: refused too.
        second = await connect(server.port)
        await second.send(initialize(server.token, tmp_path, 8))
        refusal = await second.receive()
        assert refusal is not None and "already serving" in refusal["error"]["message"]
        assert await second.closed()
        # The editor's connection is untouched: it is answered, and nothing meant for
        # the others arrived on it.
        await editor.send(tools_request(2))
        answer = await editor.response(2)
        assert answer is not None and answer["result"]["tools"]
        assert server.process.poll() is None


async def test_connections_that_send_nothing_do_not_stop_the_server(tmp_path: Path) -> None:
    async with tcp_server(tmp_path) as server:
        for _ in range(3):
            silent = await connect(server.port)
            silent.writer.close()
            await silent.writer.wait_closed()
        half = await connect(server.port)
        await half.send(b"Content-Length: 50\r\n\r\n{")  # then gone mid-message
        half.writer.close()
        editor = await connect(server.port)
        await editor.send(initialize(server.token, tmp_path))
        ready = await editor.response(1)
        assert ready is not None and "result" in ready
        assert server.process.poll() is None


async def test_the_token_file_is_created_fresh_and_private(tmp_path: Path) -> None:
    async with tcp_server(tmp_path) as first:
        path = first.token_file
        first_token = first.token
    path.write_text("stale\n")
    path.chmod(0o644)
    before = path.stat().st_ino
    (tmp_path / "state" / "reader-link").unlink(missing_ok=True)
    os.link(path, tmp_path / "state" / "reader-link")  # someone kept a handle on the old one
    port = int(re.search(r"tcp-(\d+)\.token", path.name).group(1))  # type: ignore[union-attr]
    state = tmp_path / "state"
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(state)}
    command = [sys.executable, "-m", "lsp_server", "serve", "--tcp", "--port", str(port)]
    command += ["--root", str(tmp_path)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, env=env, text=True)
    try:
        assert process.stderr is not None
        line = ""
        while "listening on 127.0.0.1" not in line:
            line = await asyncio.to_thread(process.stderr.readline)
            assert line, "server exited before listening"
        st = path.stat()
        assert stat.S_IMODE(st.st_mode) == 0o600
        assert st.st_ino != before  # a new file, not the old one rewritten
        token = path.read_text().strip()
        assert token not in ("stale", first_token)
        assert (state / "reader-link").read_text() == "stale\n"
        assert not [p for p in state.iterdir() if p.name.endswith(".toolhost-tmp")]
    finally:
        process.terminate()
        process.wait(10)


async def test_a_call_running_when_the_editor_hangs_up_is_cancelled_and_answered(
    tmp_path: Path,
) -> None:
    """The editor ends its side of the connection while a command runs: the command is
    cancelled and its answer still goes out on the open half, once; then the server ends."""
    async with tcp_server(tmp_path) as server:
        editor = await connect(server.port)
        await editor.send(initialize(server.token, tmp_path))
        assert (await editor.response(1)) is not None
        await editor.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        arguments = {"command": "echo go > started.txt; sleep 60"}
        params = {"name": "bash", "arguments": arguments}
        await editor.send(
            frame({"jsonrpc": "2.0", "id": 5, "method": "toolhost/call", "params": params})
        )
        for _ in range(600):  # a generous bound for a busy machine, not a timing assertion
            if (tmp_path / "started.txt").exists():
                break
            await asyncio.sleep(0.1)
        assert (tmp_path / "started.txt").exists()
        editor.writer.write_eof()
        answers = []
        while (message := await editor.receive()) is not None:
            if message.get("id") == 5:
                answers.append(message)
        assert len(answers) == 1, answers
        assert answers[0]["result"]["error"]["code"] == "cancelled", answers
        assert await asyncio.to_thread(server.process.wait, 60) == 0


async def test_the_editor_connection_reads_messages_as_stdio_does(tmp_path: Path) -> None:
    """Past the token, a TCP connection is read by the same loop as stdio: a request that
    cannot be read gets its error and one warning line, with no traceback in the server's
    log (pygls' loop logged one per message), and the connection goes on."""
    async with tcp_server(tmp_path) as server:
        editor = await connect(server.port)
        await editor.send(initialize(server.token, tmp_path))
        assert (await editor.response(1)) is not None
        bad = {"jsonrpc": "2.0", "id": 2, "method": "toolhost/call", "params": {"tool": "x"}}
        await editor.send(frame(bad))
        refusal = await editor.response(2)
        assert refusal is not None and refusal["error"]["code"] == -32602, refusal
        assert "params.name" in refusal["error"]["message"], refusal
        await editor.send(b"Content-Length: 9\r\n\r\nnot json!")
        await editor.send(tools_request(3))
        answer = await editor.response(3)
        assert answer is not None and answer["result"]["tools"]
        editor.writer.close()
        assert await asyncio.to_thread(server.process.wait, 60) == 0
        assert server.process.stderr is not None
        log = await asyncio.to_thread(server.process.stderr.read)
    assert "Traceback" not in log and "Unable to handle message" not in log, log
    assert "the body is not valid JSON" in log, log
