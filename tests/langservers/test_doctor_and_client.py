"""`toolhost doctor` output, and the JSON-RPC client against small FAKE servers (named as
such): a chatty stderr must not block it; odd fields are kept; death fails what waits."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from lsp_server.langservers.diagnosis import diagnose, render
from lsp_server.langservers.discovery import resolve_server
from lsp_server.langservers.jsonrpc import ConnectionClosed, JsonRpcProcess
from lsp_server.langservers.table import ROWS_BY_NAME, Candidate, ServerRow

MISSING_ROW = ServerRow(
    name="nolang",
    extensions={".nolang": "nolang"},
    candidates=(Candidate(("no-such-language-server",), "pip install no-such-language-server"),),
)

# A FAKE language server: answers every request with an odd result after flooding stderr
# with far more than a pipe buffer holds; exits on the request "die".
FAKE_SERVER = r"""
import json, sys
def read():
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        if line.strip() == b"" and length is not None:
            return json.loads(sys.stdin.buffer.read(length))
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()
while True:
    message = read()
    if message.get("method") == "die":
        sys.stderr.write("fake server: dying on request\n")
        sys.exit(7)
    sys.stderr.write("chatter " * 200000 + "\n")
    sys.stderr.flush()
    send({"jsonrpc": "2.0", "id": message["id"],
          "result": {"class": 1, "$schema": "x", "nested": {"from": [1, {"_x": None}]}}})
"""


def test_doctor_lists_found_and_missing_servers(tmp_path: Path) -> None:
    report = diagnose(tmp_path, {}, rows=[MISSING_ROW])
    text = render(report)
    assert "nolang      MISSING   (.nolang) no language server for nolang" in text
    assert "install no-such-language-server: pip install no-such-language-server" in text
    assert text.endswith("0 of 1 languages have a working language server.")


def test_configured_command_wins_and_a_missing_one_is_reported(tmp_path: Path) -> None:
    row = ROWS_BY_NAME["python"]
    server = resolve_server(row, tmp_path, {"python": [sys.executable, "-m", "x"]})
    assert server.source == "config"
    assert server.command == (sys.executable, "-m", "x")
    report = diagnose(tmp_path, {"python": ["no-such-server-binary"]}, rows=[row])
    assert "lsp.servers.python (no-such-server-binary) was not found" in render(report)


async def test_client_drains_chatty_stderr_keeps_odd_fields_and_fails_on_death(
    tmp_path: Path,
) -> None:
    script = tmp_path / "fake_language_server.py"
    script.write_text(FAKE_SERVER)

    async def no_requests(method: str, params: object) -> object:
        return None

    process = JsonRpcProcess(
        [sys.executable, str(script)],
        cwd=str(tmp_path),
        on_request=no_requests,
        on_notification=lambda method, params: None,
    )
    await process.start()
    try:
        for _ in range(3):  # 3 x 1.4 MB of stderr: far more than a pipe buffer
            result = await process.request("anything", {}, 60)
            assert result == {"class": 1, "$schema": "x", "nested": {"from": [1, {"_x": None}]}}
        with pytest.raises(ConnectionClosed) as raised:
            await process.request("die", {}, 60)
        assert "exit status 7" in raised.value.reason
        assert "fake server: dying on request" in raised.value.stderr_tail
        with pytest.raises(ConnectionClosed):
            await process.request("after death", {}, 60)
    finally:
        await asyncio.wait_for(process.stop(), 30)
