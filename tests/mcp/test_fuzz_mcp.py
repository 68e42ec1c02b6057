"""Bad input to `toolhost mcp`: malformed JSON-RPC, odd tools/call params, unknown tools and
huge or deeply nested arguments give a JSON-RPC error or an isError result, never a dead
server (raw newline-delimited JSON on the real subprocess, as a careless client sends it)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fuzz_envelopes import envelopes, key, owed
from tests.mcp.clients import raw_mcp
from tests.mcp.http_server import http_mcp


def random_json(rng: random.Random, depth: int = 0) -> Any:
    """A seeded random JSON value (reproducible, unlike hypothesis' .example())."""
    kind = rng.randrange(7 if depth < 4 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randint(-(2**70), 2**70)
    if kind == 3:
        return rng.uniform(-1e308, 1e308)
    if kind == 4:
        return "".join(
            chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0xD7FF)]))
            for _ in range(rng.randrange(12))
        )
    if kind == 5:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {
        random_json(rng, 4) or "k": random_json(rng, depth + 1) for _ in range(rng.randrange(4))
    }


def assert_answered(reply: dict[str, Any]) -> None:
    """A JSON-RPC error, or a tool result; never a traceback on the wire."""
    if "error" in reply:
        assert isinstance(reply["error"]["code"], int)
        assert "Traceback" not in json.dumps(reply)
        return
    result = reply["result"]
    assert isinstance(result["content"], list)
    if result.get("isError"):
        assert result["structuredContent"]["code"] != "internal_error", result


@pytest.mark.slow
async def test_malformed_messages_never_kill_the_server(ws: Path) -> None:
    server = await raw_mcp(ws, {}, "fuzz")
    try:
        for garbage in (
            b"{",
            b"[]",
            b"42",
            b'"x"',
            b'{"jsonrpc": "2.0"}',
            b"\xff\xfe",
            b'{"id": 5}',
            b"null",
        ):
            await server.send_bytes(garbage)
        for method, params in [
            ("tools/call", None),
            ("tools/call", {"name": 5}),
            ("tools/call", {"name": "read_file", "arguments": [1, 2]}),
            ("tools/call", {"name": "read_file", "arguments": "path"}),
            ("no/such/method", {}),
            ("tools/list", {"cursor": {"deep": True}}),
        ]:
            assert_answered(await server.request(method, params))
        # Nested deeper than any JSON encoder recurses: written by hand.
        deep = "[" * 5000 + '"x"' + "]" * 5000
        await server.send_bytes(
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file",'
            b'"arguments":{"path":' + deep.encode() + b"}}}"
        )
        # Nobody can parse it (pydantic's recursion limit, then json's): the error goes to the
        # id its text shows, and the server goes on serving.
        too_deep = (await server.answer(7))["error"]
        assert too_deep["code"] == -32700
        assert too_deep["message"] == "Parse error: the request is nested too deeply"
        after_deep = await server.request(
            "tools/call", {"name": "read_file", "arguments": {"path": "hello.txt"}}
        )
        assert "hello from the fixture" in after_deep["result"]["content"][0]["text"]
        huge = {"path": "hello.txt", "content": "y" * 20_000_000}
        assert_answered(
            await server.request("tools/call", {"name": "write_file", "arguments": huge})
        )
        unknown = await server.request("tools/call", {"name": "nope", "arguments": {}})
        assert unknown["error"]["code"] == -32602
        assert unknown["error"]["data"]["tool"] == "nope"
        alive = await server.request(
            "tools/call", {"name": "read_file", "arguments": {"path": "hello.txt"}}
        )
        assert "hello from the fixture" in alive["result"]["content"][0]["text"]
    finally:
        await server.close()


async def test_fuzzed_tool_calls_are_results(ws: Path) -> None:
    """Random names and arguments (schema-agnostic); seeded so a failure reproduces."""
    from lsp_server.tools.registry import build_registry

    names = [tool.name for tool in build_registry().surface("full") if tool.contract.read_only]
    rng = random.Random(14)
    server = await raw_mcp(ws, {}, "fuzz")
    try:
        for number in range(150):
            name = rng.choice([*names, "", "x" * 300, "read_file\x00"])
            # (Lone surrogates: test_six_hundred_malformed_envelopes_* below.)
            arguments = (
                random_json(rng)
                if number % 3
                else {"path": rng.choice(["hello.txt", "../..", "a" * 5000])}
            )
            if not isinstance(arguments, dict):
                arguments = {"value": arguments}
            assert_answered(
                await server.request("tools/call", {"name": name, "arguments": arguments})
            )
        alive = await server.request("tools/list", {})
        assert len(alive["result"]["tools"]) == len(build_registry().surface("full"))
    finally:
        await server.close()


async def test_a_request_the_sdk_cannot_read_is_answered_when_it_has_an_id(ws: Path) -> None:
    """The SDK drops a line that is not a valid JSON-RPC message; a request among them
    would wait for ever. One with a usable id gets an error for that id; the rest are
    dropped (logged), and the server goes on serving."""
    server = await raw_mcp(ws, {}, "malformed")
    try:
        cases = [
            ({"jsonrpc": "2.0", "id": 61, "method": "tools/call", "params": "x"}, -32602),
            ({"jsonrpc": "2.0", "id": 62, "method": 5}, -32600),
            ({"jsonrpc": "1.0", "id": "s63", "method": "tools/list"}, -32600),
            ({"id": 64, "method": "tools/list"}, -32600),
        ]
        for message, _ in cases:
            await server.send(message)
        for message, code in cases:
            error = (await server.answer(message["id"]))["error"]
            assert error["code"] == code, error
            assert ("params must be an object" in error["message"]) == (code == -32602)
        # Not JSON at all: answered at the id its text shows (a client waits on it).
        await server.send_bytes(b'{"jsonrpc": "2.0", "id": "t65", "method": "tools/list", }')
        broken = (await server.answer("t65"))["error"]
        assert broken["code"] == -32700 and "not JSON" in broken["message"], broken
        await server.send_bytes(b'{"jsonrpc": "2.0", "id": true, "method": "ping"}')
        alive = await server.request("ping", {})
        assert alive["result"] == {}
    finally:
        await server.close()


async def test_params_that_do_not_fit_their_method_name_the_field(ws: Path) -> None:
    """The SDK's own answer was a bare "Invalid request parameters" (data ""), whatever
    the field; the answer now says which field and what it got, with the same code."""
    server = await raw_mcp(ws, {}, "params")
    try:
        cases = [
            ({"name": 5}, "tools/call: invalid params: params.name: Input should be a valid "
             "string (got the number 5)"),
            ({"name": "read_file", "arguments": "x"}, "tools/call: invalid params: "
             "params.arguments: Input should be an object (got the string 'x')"),
            ({"arguments": {}}, "tools/call: invalid params: params.name: required"),
        ]  # fmt: skip
        for params, message in cases:
            error = (await server.request("tools/call", params))["error"]
            assert error == {"code": -32602, "message": message}, error
        listing = (await server.request("tools/list", {"cursor": 5}))["error"]
        assert listing["message"].startswith("tools/list: invalid params: params.cursor:")
        alive = await server.request(
            "tools/call", {"name": "read_file", "arguments": {"path": "hello.txt"}}
        )
        assert "hello from the fixture" in alive["result"]["content"][0]["text"]
    finally:
        await server.close()


@pytest.mark.slow
async def test_six_hundred_malformed_envelopes_are_answered_and_the_server_lives(ws: Path) -> None:
    """Lone surrogates in ids, methods, keys and values, odd ids, huge values, deep nesting,
    broken JSON and bytes that are not UTF-8, streamed to one server: every request with a
    string or integer id is answered at that id (a lone surrogate escape in it comes back as
    the same escape), and the server is alive at the end. `{"id": "\\ud800"}` ended it."""
    lines = envelopes(["ping", "tools/list", "tools/call", "x/y", "notifications/cancelled"])
    assert len(lines) >= 600
    server = await raw_mcp(ws, {}, "envelopes")
    try:
        for envelope in lines:
            await server.send_bytes(envelope.line)
        waiting = owed(lines)
        while waiting:
            message = await server.next_message()  # fails when the server died
            if "id" in message and "method" not in message:
                waiting.discard(key(message["id"]))
        alive = await server.request("ping", {})
        assert alive["result"] == {}
        assert server.process.returncode is None
    finally:
        await server.close()


def _replies(response: httpx.Response) -> list[Any]:
    """The JSON-RPC messages of an HTTP answer (a JSON body, or SSE events)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        events = response.text.split("\n")  # not splitlines: U+2028 is inside the JSON
        return [json.loads(line[5:]) for line in events if line.startswith("data:") and line[5:]]
    return [json.loads(response.content)] if response.content else []


@pytest.mark.slow
async def test_six_hundred_malformed_envelopes_over_http_are_answered_at_their_ids(
    ws: Path,
) -> None:
    """The same lines POSTed to `toolhost mcp --http`: every HTTP request is answered (no
    5xx), the JSON-RPC error of a body the SDK cannot read carries the request's id (the
    SDK's own said id null, which no client can match), and the server lives on."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "envelopes", "version": "0"},
        },
    }
    lines = envelopes(["ping", "tools/list", "tools/call", "x/y", "notifications/cancelled"])
    assert len(lines) >= 600
    async with http_mcp(ws) as server, httpx.AsyncClient(timeout=120) as http:
        opened = await http.post(server.url, json=initialize, headers={**headers, **server.auth})
        headers.update(server.auth)
        headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = "2025-11-25"
        unanswered = []
        for envelope in lines:
            response = await http.post(server.url, content=envelope.line, headers=headers)
            assert response.status_code < 500, (envelope.line[:200], response.text[:500])
            ids = [key(reply.get("id")) for reply in _replies(response)]
            if envelope.answer_id is not None and key(envelope.answer_id) not in ids:
                unanswered.append((envelope.line[:200], response.text[:300]))
        assert unanswered == []
        alive = await http.post(
            server.url, json={"jsonrpc": "2.0", "id": "z", "method": "ping"}, headers=headers
        )
        assert _replies(alive) == [{"jsonrpc": "2.0", "id": "z", "result": {}}]
        assert server.process.returncode is None


@pytest.mark.slow
async def test_a_root_whose_name_is_not_utf8_is_served_over_stdio_and_http(tmp_path: Path) -> None:
    """Every call failed (code 0, "surrogates not allowed": the checkpoint and index keys
    hashed the root's name as strict UTF-8), and over HTTP the SDK then could not write
    the answer, whose meta names the root: an empty event stream, no answer at all."""
    root = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    root.mkdir()
    (root / ".git").mkdir()
    (root / "hello.txt").write_text("hello from the odd root\n")
    calls = [
        ("read_file", {"path": "hello.txt"}),
        ("glob", {"pattern": "*.txt"}),
        ("grep", {"pattern": "odd root"}),
    ]
    server = await raw_mcp(root, {}, "odd-root")
    try:
        for name, arguments in calls:
            reply = await server.request("tools/call", {"name": name, "arguments": arguments})
            assert "hello" in reply["result"]["content"][0]["text"], reply
            assert reply["result"]["_meta"]["toolhost"]["paths"][0].startswith(str(root))
    finally:
        await server.close()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "odd-root", "version": "0"},
        },
    }
    async with http_mcp(root) as served, httpx.AsyncClient(timeout=120) as http:
        opened = await http.post(served.url, json=initialize, headers={**headers, **served.auth})
        headers.update(served.auth)
        headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = "2025-11-25"
        for number, (name, arguments) in enumerate(calls):
            message = {
                "jsonrpc": "2.0",
                "id": number,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
            (reply,) = _replies(await http.post(served.url, json=message, headers=headers))
            assert "hello" in reply["result"]["content"][0]["text"], reply
            assert "/caf\\xe9" in reply["result"]["_meta"]["toolhost"]["paths"][0], reply
