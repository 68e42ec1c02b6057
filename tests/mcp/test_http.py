"""`toolhost mcp --http`: the official SDK's Streamable HTTP client against it, and who is
refused (no or a wrong token, a foreign Host or Origin, an address beyond loopback)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import stat
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS

from lsp_server.mcp.http.http_gate import NotLoopback, parse_address
from lsp_server.tools.registry import build_registry
from tests.mcp.clients import structured, text_of, toolhost_command
from tests.mcp.http_server import HttpMcp, http_mcp

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-http", "version": "0"},
    },
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@asynccontextmanager
async def sdk_session(
    server: HttpMcp, modern: bool = False, **options: Any
) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers=server.auth, timeout=120) as http,
        streamable_http_client(server.url, http_client=http) as (read, write),
        ClientSession(
            read, write, client_info=Implementation(name="http-tests", version="1.0"), **options
        ) as session,
    ):
        if modern:
            await session.discover()
        else:
            await session.initialize()
        yield session


async def post(server: HttpMcp, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=60) as http:
        return await http.post(server.url, json=INITIALIZE, headers={**MCP_HEADERS, **headers})


@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_the_sdk_http_client_lists_reads_and_is_refused(ws: Path, modern: bool) -> None:
    async with http_mcp(ws) as server, sdk_session(server, modern) as session:
        listed = (await session.list_tools()).tools
        read = await session.call_tool("read_file", {"path": "hello.txt"})
        grep = await session.call_tool("grep", {"pattern": "line three"})
        edit = await session.call_tool(
            "edit_file", {"path": "notes.md", "old_string": "three", "new_string": "3"}
        )
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("grpe", {"pattern": "x"})
    assert unknown.value.error.code == -32602
    assert unknown.value.error.data["closest"][0] == "grep"
    assert session.protocol_version == ("2026-07-28" if modern else "2025-11-25")
    assert [tool.name for tool in listed] == build_registry().names("full")
    assert read.is_error is False
    assert "hello from the fixture" in text_of(read)
    assert "notes.md" in text_of(grep)
    # The same contract as over stdio: an unread file is not edited.
    assert edit.is_error is True
    assert structured(edit)["code"] == "FS_NOT_OBSERVED"
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"


async def test_an_approval_form_over_http_lets_the_edit_through(ws: Path) -> None:
    """Revision 2025-11-25 over HTTP: the approval is an elicitation/create request on the
    call's SSE stream, answered by the client's POST."""
    asked: list[Any] = []

    async def approve(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"decision": "allow_once"})

    async with http_mcp(ws) as server, sdk_session(server, elicitation_callback=approve) as s:
        await s.call_tool("read_file", {"path": "notes.md"})
        edit = await s.call_tool(
            "edit_file", {"path": "notes.md", "old_string": "three", "new_string": "3"}
        )
    assert edit.is_error is False, text_of(edit)
    assert len(asked) == 1 and "+line 3" in asked[0].message
    assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"


async def test_each_http_session_is_a_toolhost_session(ws: Path, bypass_policy: None) -> None:
    """Two clients of one server: what one read does not let the other write."""
    edit = {"path": "notes.md", "old_string": "three", "new_string": "3"}
    async with (
        http_mcp(ws) as server,
        sdk_session(server) as reader,
        sdk_session(server) as other,
    ):
        await reader.call_tool("read_file", {"path": "notes.md"})
        blind = await other.call_tool("edit_file", edit)
        informed = await reader.call_tool("edit_file", edit)
    assert blind.is_error is True and structured(blind)["code"] == "FS_NOT_OBSERVED"
    assert informed.is_error is False, text_of(informed)
    assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"


@pytest.mark.slow
async def test_a_large_write_reaches_the_runtime(ws: Path, bypass_policy: None) -> None:
    """The HTTP body cap is toolhost's own (64 MiB), not the SDK's default 4 MiB."""
    content = "0123456789abcdef\n" * (5 * 1024 * 1024 // 17)  # over the SDK default
    async with http_mcp(ws) as server, sdk_session(server) as session:
        written = await session.call_tool("write_file", {"path": "big.txt", "content": content})
    assert written.is_error is False, text_of(written)
    assert (ws / "big.txt").read_text() == content


async def test_a_missing_or_wrong_token_is_refused(ws: Path) -> None:
    async with http_mcp(ws) as server:
        missing = await post(server, {})
        wrong = await post(server, {"Authorization": "Bearer " + "x" * len(server.token)})
        basic = await post(server, {"Authorization": f"Basic {server.token}"})
        right = await post(server, server.auth)
    for refused in (missing, wrong, basic):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert "bearer token" in refused.json()["error"]["message"]
    assert right.status_code == 200
    assert "mcp-session-id" in right.headers


async def test_a_foreign_host_or_origin_is_refused(ws: Path) -> None:
    async with http_mcp(ws) as server:
        port = server.port
        rebound = await post(server, {**server.auth, "Host": f"evil.example.com:{port}"})
        other_port = await post(server, {**server.auth, "Host": f"127.0.0.1:{port + 1}"})
        foreign = await post(server, {**server.auth, "Origin": "http://evil.example.com"})
        local_page = await post(server, {**server.auth, "Origin": f"http://localhost:{port + 1}"})
        own = await post(
            server,
            {**server.auth, "Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"},
        )
    assert rebound.status_code == other_port.status_code == 421
    assert "does not name this server" in rebound.json()["error"]["message"]
    assert foreign.status_code == local_page.status_code == 403
    assert own.status_code == 200


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.slow
async def test_the_token_file_is_new_and_private(ws: Path, tmp_path: Path) -> None:
    port = free_port()
    async with http_mcp(ws, port=port) as first:
        token_file = first.token_file
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        first_token = first.token
    # A left-over file (readable by others) is replaced by a new one, never reused.
    token_file.write_text("old-token\n")
    token_file.chmod(0o644)
    async with http_mcp(ws, port=port) as second:
        assert second.token_file == token_file
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert second.token not in ("old-token", first_token)
        assert (await post(second, {"Authorization": "Bearer old-token"})).status_code == 401
        # Stopped while a client holds a session open: it ends, and takes its token along.
        async with sdk_session(second) as session:
            await session.call_tool("read_file", {"path": "hello.txt"})
            second.process.terminate()
            assert await asyncio.wait_for(second.process.wait(), 60) == 0
    assert not token_file.exists()


@pytest.mark.parametrize(
    "address", ["0.0.0.0:0", "[::]:0", "10.1.2.3:8765", "example.com:8765", "127.0.0.1"]
)
def test_only_loopback_addresses_parse(address: str) -> None:
    with pytest.raises(NotLoopback):
        parse_address(address)


def test_toolhost_mcp_refuses_to_listen_beyond_loopback(ws: Path) -> None:
    done = subprocess.run(
        [*toolhost_command(), "mcp", "--root", str(ws), "--http", "0.0.0.0:0"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "0.0.0.0 is not a loopback address" in done.stderr


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("localhost:0", ("127.0.0.1", 0)),
        ("[::1]:9000", ("::1", 9000)),
        ("127.0.0.2:1", ("127.0.0.2", 1)),
    ],
)
def test_loopback_addresses_parse(address: str, expected: Any) -> None:
    assert parse_address(address) == expected


async def test_every_handshake_revision_in_the_docs_is_negotiated(ws: Path) -> None:
    """docs/MCP.md names each revision toolhost negotiates; each one is answered as asked,
    and an unknown one gets the newest handshake revision."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "MCP.md").read_text()
    table = set(re.findall(r"^\| (\d{4}-\d\d-\d\d) \|", docs, re.MULTILINE))
    assert table == set(SUPPORTED_PROTOCOL_VERSIONS)
    negotiated = {}
    async with http_mcp(ws) as server, httpx.AsyncClient(timeout=60) as http:
        for version in [*HANDSHAKE_PROTOCOL_VERSIONS, "2099-01-01"]:
            body = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}
            answer = await http.post(server.url, json=body, headers={**MCP_HEADERS, **server.auth})
            assert answer.status_code == 200, answer.text
            data = next(
                json.loads(line[5:])
                for line in answer.text.splitlines()
                if line.startswith("data:")
            )
            negotiated[version] = data["result"]["protocolVersion"]
    assert negotiated == {
        **{version: version for version in HANDSHAKE_PROTOCOL_VERSIONS},
        "2099-01-01": "2025-11-25",
    }
