"""End to end over pytest-lsp against `toolhost serve` as a subprocess."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from lsprotocol import types

from lsp_server.core.contract import canonical_json
from tests.helpers import lsp_call, lsp_session, text_of

ROOT = Path(__file__).resolve().parents[2]


async def test_tools_list_equals_generated_schemas(workspace: Path) -> None:
    generated = json.loads((ROOT / "schemas" / "tools.json").read_text())
    async with lsp_session(workspace) as client:
        full = await client.protocol.send_request_async("toolhost/tools", {"surface": "full"})
        minimal = await client.protocol.send_request_async("toolhost/tools", {"surface": "minimal"})
        core = await client.protocol.send_request_async("toolhost/tools", {})
    assert [t["name"] for t in full["tools"]] == [t["name"] for t in generated["tools"]]
    for listed, expected in zip(full["tools"], generated["tools"], strict=True):
        assert canonical_json(listed["inputSchema"]) == canonical_json(expected["inputSchema"])
        assert listed["readOnly"] == expected["readOnly"]
        assert listed["description"] == expected["description"]
    assert full["surfaceHash"] == generated["surfaces"]["full"]["hash"]
    assert minimal["surfaceHash"] == generated["surfaces"]["minimal"]["hash"]
    assert core["surface"] == "core"
    assert core["surfaceHash"] == generated["surfaces"]["core"]["hash"]
    # $schema arrives intact (pygls would rename it by default).
    assert all("$schema" in t["inputSchema"] for t in full["tools"])


async def test_initialize_advertises_toolhost_capability(workspace: Path) -> None:
    async with lsp_session(workspace) as client:
        experimental = client.init_result.capabilities.experimental  # type: ignore[attr-defined]
    toolhost = experimental["toolhost"]
    assert toolhost["protocolVersion"] == 1
    assert toolhost["surfaces"] == ["core", "full", "minimal"]
    assert len(toolhost["surfaceHash"]) == 64 and len(toolhost["fullHash"]) == 64


async def test_schema_mismatch_is_not_executed(workspace: Path) -> None:
    target = workspace / "src" / "inventory.py"
    before = target.read_bytes()
    async with lsp_session(workspace, {"policy": {"mode": "bypass"}}) as client:
        await lsp_call(client, "read_file", {"path": "src/inventory.py"})
        result = await lsp_call(
            client, "edit_file", {"path": "src/inventory.py", "new_string": "x", "from": 1}
        )
    assert result["isError"]
    error = result["error"]
    assert error["code"] == "schema_mismatch"
    signature = error["signature"]
    prefix, tool, fp16, category = signature.split(":")
    assert (prefix, tool, category) == ("argument_validation", "edit_file", "additionalProperties")
    assert len(fp16) == 16 and all(c in "0123456789abcdef" for c in fp16)
    assert {"path": "/from", "keyword": "additionalProperties"}.items() <= error["violations"][
        0
    ].items()
    assert any(
        v["path"] == "/old_string" and v["keyword"] == "required" for v in error["violations"]
    )
    assert "NOT executed" in text_of(result)
    assert target.read_bytes() == before


async def test_wrapper_hint_only_when_inner_object_validates(workspace: Path) -> None:
    async with lsp_session(workspace) as client:
        wrapped = await lsp_call(client, "read_file", {"arguments": {"path": "README.md"}})
        wrapped_bad = await lsp_call(client, "read_file", {"arguments": {"nope": 1}})
        two_keys = await lsp_call(client, "read_file", {"arguments": {"path": "README.md"}, "x": 1})
    assert "remove that wrapper" in text_of(wrapped)
    assert "remove that wrapper" not in text_of(wrapped_bad)
    assert "remove that wrapper" not in text_of(two_keys)
    for result in (wrapped, wrapped_bad, two_keys):
        assert result["error"]["code"] == "schema_mismatch"


async def test_unknown_tool_lists_closest_names(workspace: Path) -> None:
    async with lsp_session(workspace) as client:
        result = await lsp_call(client, "read_fil", {"path": "x"})
    assert result["isError"] and result["error"]["code"] == "unknown_tool"
    assert "read_file" in result["error"]["details"]["closest"]
    assert "did you mean read_file" in text_of(result)


async def test_arguments_with_awkward_keys_arrive_intact(workspace: Path) -> None:
    content = json.dumps({"$schema": "x", "from": 1, "class": {"_x": [1, {"y": None}]}})
    async with lsp_session(workspace, {"policy": {"mode": "bypass"}}) as client:
        result = await lsp_call(client, "write_file", {"path": "odd.json", "content": content})
        assert not result["isError"], result
        status = await client.protocol.send_request_async("toolhost/status", {})
    assert json.loads((workspace / "odd.json").read_text()) == json.loads(content)
    assert status["roots"] == [str(workspace.resolve())]


async def test_execute_command_call(workspace: Path) -> None:
    async with lsp_session(workspace) as client:
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="toolhost.call",
                arguments=[{"name": "read_file", "arguments": {"path": "README.md"}}],
            )
        )
    assert not result["isError"]
    assert "inventory" in text_of(result)


async def test_did_call_notification_matches_result(workspace: Path) -> None:
    async with lsp_session(workspace) as client:
        result = await lsp_call(client, "read_file", {"path": "README.md"}, callId="c-1")
        await client.protocol.send_request_async("toolhost/status", {})
        did_calls = list(client.did_calls)  # type: ignore[attr-defined]
    assert result["callId"] == "c-1"
    assert did_calls and did_calls[-1]["callId"] == "c-1"
    assert did_calls[-1]["tool"] == "read_file"
    assert did_calls[-1]["paths"] == [str((workspace / "README.md").resolve())]


async def test_unknown_tools_are_reported_like_any_call(workspace: Path) -> None:
    async with lsp_session(workspace) as client:
        await lsp_call(client, "no_such_tool", {"x": 1}, callId="c-unknown")
        await client.protocol.send_request_async("toolhost/status", {})
        did_calls = list(client.did_calls)  # type: ignore[attr-defined]
    reported = [d for d in did_calls if d["callId"] == "c-unknown"]
    assert reported and reported[0]["code"] == "unknown_tool" and reported[0]["isError"]


async def test_non_ascii_answers_are_framed_by_their_bytes(tmp_path: Path) -> None:
    """Once warm, answers carry non-ASCII text as UTF-8 (not \\u escapes): the
    Content-Length counts bytes, or the client would read past or short of a message."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "plain.txt").write_text("naïve → café, ünïcode 🦊\n" * 50)
    async with lsp_session(root) as client:
        for _ in range(3):
            read = await lsp_call(client, "read_file", {"path": "plain.txt"})
            status = await client.protocol.send_request_async("toolhost/status", {})
            assert text_of(read).splitlines()[49] == "    50→naïve → café, ünïcode 🦊"
            assert status is not None


def test_a_calls_answer_goes_out_before_its_audit_line_and_did_call(tmp_path: Path) -> None:
    """The call's reports wait for its answer (typed_protocol.py holds them). The audit log
    is a FIFO nobody reads yet, so the server blocks the moment it opens it: the answer
    arrives all the same, alone in its packet (stdout is a SOCK_SEQPACKET socket, which
    keeps each write whole). Once the test reads the FIFO, the line comes, then didCall."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\n" * 700)
    state = tmp_path / "state"
    state.mkdir()
    os.mkfifo(state / "audit.jsonl", 0o600)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(state)}
    server = subprocess.Popen(
        [sys.executable, "-m", "lsp_server", "serve"],
        stdin=subprocess.PIPE, stdout=theirs, stderr=subprocess.DEVNULL, env=env, cwd=ROOT,
    )  # fmt: skip
    theirs.close()
    ours.settimeout(60)

    def send(message: dict[str, object]) -> None:
        assert server.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        server.stdin.flush()

    def packet_with(needle: bytes) -> bytes:
        while True:
            packet = ours.recv(1 << 22)
            if needle in packet.replace(b" ", b""):
                return packet

    try:
        initialize = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        send({"id": 1, "method": "initialize", "params": initialize})
        packet_with(b'"id":1,')
        send({"method": "initialized", "params": {}})
        call = {"name": "read_file", "arguments": {"path": "a.txt"}, "callId": "c-10"}
        send({"id": 10, "method": "toolhost/call", "params": call})
        answer = packet_with(b'"id":10,')
        assert b"hello" in answer and b"toolhost/didCall" not in answer
        audit = os.open(state / "audit.jsonl", os.O_RDONLY)  # the server's open returns
        try:
            line = b""
            while not line.endswith(b"\n"):
                chunk = os.read(audit, 4096)
                assert chunk, "the audit line never came"
                line += chunk
        finally:
            os.close(audit)
        assert json.loads(line)["callId"] == "c-10"
        assert b'"callId":"c-10"' in packet_with(b"toolhost/didCall")
    finally:
        server.kill()
        server.wait()
        ours.close()


def test_nothing_else_in_the_server_can_write_into_the_wire(tmp_path: Path) -> None:
    """While `toolhost serve` serves stdio, its fd 1 writes to stderr and its fd 0 reads the
    null device: a child that inherits them (a command, a worker pool, a language server)
    or a stray print cannot write into the middle of an answer or take the client's
    messages. The client's pipes are served from private duplicates."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(tmp_path / "state")}
    with (tmp_path / "stderr").open("wb") as stderr:
        server = subprocess.Popen(
            [sys.executable, "-m", "lsp_server", "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=ROOT,
        )  # fmt: skip
    # The pipe, named from our end: the child may not have set up its own fd 1 yet.
    assert server.stdout is not None
    client_stdout = os.readlink(f"/proc/self/fd/{server.stdout.fileno()}")
    try:
        client = RawPipe(server)
        initialize = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        client.request(1, "initialize", initialize)
        client.send({"method": "initialized", "params": {}})
        fds = f"/proc/{server.pid}/fd"
        assert os.readlink(f"{fds}/0") == os.devnull
        assert os.readlink(f"{fds}/1") == os.readlink(f"{fds}/2") == str(tmp_path / "stderr")
        assert client_stdout in open_files(fds)  # the private duplicate answers
        read = client.request(
            2, "toolhost/call", {"name": "read_file", "arguments": {"path": "a.txt"}}
        )
        assert "hello" in read["result"]["content"][0]["text"]
    finally:
        server.kill()
        server.wait()


def open_files(fds: str) -> list[str]:
    """What a live process's descriptors name; one closed between the listing and its
    readlink (a worker's pipe, a file just read) is skipped."""
    named = []
    for fd in os.listdir(fds):
        try:
            named.append(os.readlink(f"{fds}/{fd}"))
        except FileNotFoundError:
            continue
    return named


class RawPipe:
    """LSP frames over a child's pipes, written and read by hand."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin, self.stdout = process.stdin, process.stdout

    def send(self, message: dict[str, object]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.stdin.flush()

    def request(self, msg_id: int, method: str, params: object) -> dict[str, object]:
        self.send({"id": msg_id, "method": method, "params": params})
        while True:
            length = 0
            while (line := self.stdout.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message: dict[str, object] = json.loads(self.stdout.read(length))
            if message.get("id") == msg_id:
                return message
