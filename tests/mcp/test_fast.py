"""Plain `tools/call`s are answered by `toolhost mcp`'s front without the SDK (mcp/stdio/fast.py):
the bytes on the wire are the SDK's for the same calls (results, refusals, the unknown-tool
error, approval forms and their answers), a call runs while the SDK has not loaded, and a
cancelled call is stopped and not answered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest

from tests.mcp.clients import blocked_sdk, spawn_mcp
from tests.mcp.fast_calls import CALLS, CLIENT, VOLATILE, line_of, masked, workspace


async def transcript(root: Path, via_sdk: bool) -> list[bytes]:
    """Every line the server writes for CALLS, forms included. `via_sdk`: an initialize the
    front leaves to the SDK (params with `_meta`), so that every message is the SDK's."""
    workspace(root)
    client = await spawn_mcp(root)
    params: dict[str, Any] = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": CLIENT,
    }
    if via_sdk:
        params["_meta"] = {}
    lines = []
    try:
        await client.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        lines.append(await line_of(client))
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # As Codex lists: with a progress token (from the cache on a second start).
        listing = {"jsonrpc": "2.0", "id": "l", "method": "tools/list"}
        await client.send({**listing, "params": {"_meta": {"progressToken": 7}}})
        lines.append(await line_of(client))
        for message_id, call, form in CALLS:
            request = {"jsonrpc": "2.0", "id": message_id, "method": "tools/call", "params": call}
            await client.send(request)
            while True:
                line = await line_of(client)
                lines.append(line)
                message = json.loads(line)
                if message.get("method") == "elicitation/create":
                    await client.send({"jsonrpc": "2.0", "id": message["id"], **form})
                elif message.get("id") == message_id:
                    break
    finally:
        await client.close()
    return masked(lines, VOLATILE)


@pytest.mark.slow
async def test_plain_calls_answer_the_sdks_bytes(ws: Path) -> None:
    fast = await transcript(ws, via_sdk=False)
    sdk = await transcript(ws, via_sdk=True)
    cached = await transcript(ws, via_sdk=False)  # tools/list from the front's cache now
    assert len(fast) == len(sdk) == len(cached)
    # tools/list (line 1): the SDK's JSON; the front writes the registry's order of members.
    assert json.loads(fast[1]) == json.loads(sdk[1])
    assert cached[1] == fast[1]
    for ours, theirs, again in zip(fast[2:], sdk[2:], cached[2:], strict=True):
        assert ours == theirs
        assert again == theirs
    # The calls covered what they are meant to: results, refusals, the unknown-tool error,
    # text and image content, forms allowed, declined and unreadable.
    answers = {m.get("id"): m for m in map(json.loads, fast) if "method" not in m}
    assert answers[4]["error"]["code"] == -32602
    assert answers[2]["result"]["structuredContent"]["code"]
    assert answers[13]["result"]["content"][1]["type"] == "image"
    assert answers[7]["result"]["isError"] is False
    assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"
    assert answers[8]["result"]["isError"] is True and not (ws / "new.txt").exists()
    assert answers[9]["result"]["structuredContent"]["code"] == "permission.unreadable_answer"
    assert answers[12]["result"]["_meta"]["toolhost"]["truncated"] is True
    assert sum(b"elicitation/create" in line for line in fast) == 3
    progress = [json.loads(line) for line in fast if b"notifications/progress" in line]
    assert [p["params"] for p in progress] == [
        {"progressToken": "p15", "progress": 1, "message": "step one"}
    ]


async def test_a_plain_call_runs_before_the_sdk_has_loaded(ws: Path, tmp_path: Path) -> None:
    client = await spawn_mcp(ws, blocked_sdk(tmp_path))
    try:
        init = await client.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT},
        )
        assert init["result"]["serverInfo"]["name"] == "toolhost"
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        read = await client.request(
            "tools/call", {"name": "read_file", "arguments": {"path": "hello.txt"}}
        )
        assert "hello from the fixture" in read["result"]["content"][0]["text"]
        unknown = await client.request("tools/call", {"name": "nope", "arguments": {}})
        assert unknown["error"]["code"] == -32602
    finally:
        await client.close()


@pytest.mark.slow
async def test_a_cancelled_call_stops_and_is_not_answered(ws: Path, tmp_path: Path) -> None:
    """notifications/cancelled for a call the front runs: its command is killed (it would
    write a file after 1 s; a later call that takes 2 s finishes with no file there), no
    answer comes for it (the SDK never answers a cancelled request), other calls are."""
    marker = ws / "finished.txt"
    client = await spawn_mcp(ws, blocked_sdk(tmp_path))
    try:
        await client.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT},
        )
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        calls = [
            (50, {"command": f"echo started; sleep 1; echo done > {marker.name}"}),
            (51, {"command": "sleep 2; echo slept"}),
        ]
        for message_id, arguments in calls:
            params = {"name": "bash", "arguments": arguments}
            await client.send(
                {"jsonrpc": "2.0", "id": message_id, "method": "tools/call", "params": params}
            )
        await client.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 50}}
        )
        answered: dict[Any, dict[str, Any]] = {}
        while 51 not in answered:
            message = await client.next_message()
            answered[message.get("id")] = message
        # The commands run here (sandboxed, no approval needed): so 50 would have written.
        assert "slept" in answered[51]["result"]["content"][0]["text"], answered[51]
        read = await client.request(
            "tools/call", {"name": "read_file", "arguments": {"path": "hello.txt"}}
        )
        assert "hello from the fixture" in read["result"]["content"][0]["text"]
        assert 50 not in answered
        assert not marker.exists()
    finally:
        await client.close()


@pytest.mark.parametrize("sdk_loaded", [True, False], ids=["sdk-loaded", "before-the-sdk"])
def test_the_encoder_writes_what_pydantic_writes(
    sdk_loaded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sdk_json.encode against pydantic_core.to_json, which the SDK's model dumps use: once the
    SDK has loaded pydantic_core, its encoder for every message; before that, the
    standard library's where the two agree."""
    import pydantic_core
    from pydantic_core import to_json

    from lsp_server.mcp import sdk_json

    used: list[Any] = []

    def recording_to_json(message: Any) -> bytes:
        used.append(message)
        encoded: bytes = to_json(message)
        return encoded

    monkeypatch.setattr(pydantic_core, "to_json", recording_to_json)
    monkeypatch.setattr(
        sdk_json, "_loaded_to_json", lambda: recording_to_json if sdk_loaded else None
    )
    encode = sdk_json.encode

    values: list[Any] = [
        "plain",
        'é \u2028 \u2029 \x00 \x1f \x7f \t\n\r\b\f \\ " / 😀',
        "text that says 1e5 or 2E-3, NaN and Infinity",
        0.0001,
        0.00012345,
        9999999999999998.0,
        123456789.123,
        float("nan"),
        float("-inf"),
        0.1,
        9.053,
        1e-05,
        1e-7,
        123456789012345678.0,
        1e16,
        1e20,
        2.5e-300,
        -0.0,
        1.0,
        2**70,
        -(2**63),
        True,
        None,
        [],
        {},
        {"nested": [{"a": 1.5, "b": [None, "x"], "c": {"d": 1e-9}}]},
    ]
    for value in values:
        message = {"jsonrpc": "2.0", "id": 1, "result": {"value": value}}
        used.clear()
        assert encode(message) == to_json(message), value
        # Before the SDK, pydantic's encoder only where the two differ (floats' exponents).
        assert len(used) == (1 if sdk_loaded or not sdk_json._plain(message) else 0), value


async def test_a_call_running_when_the_input_ends_is_answered_once(ws: Path) -> None:
    """The client closes its input while a command runs: the command is cancelled, the call
    is answered exactly once (it was answered twice: its cancelled result, then the SDK's
    "Connection closed"), and the server exits."""
    started = ws / "started.txt"
    client = await spawn_mcp(ws)
    try:
        await client.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT},
        )
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert (await client.request("tools/list", {}))["result"]["tools"]
        arguments = {"command": f"echo go > {started.name}; sleep 60"}
        params = {"name": "bash", "arguments": arguments}
        await client.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
        for _ in range(600):  # a generous bound for a busy machine, not a timing assertion
            if started.exists():
                break
            await asyncio.sleep(0.1)
        assert started.exists()
        assert client.process.stdin is not None and client.process.stdout is not None
        client.process.stdin.close()
        rest = await asyncio.wait_for(client.process.stdout.read(), 60)
        assert await asyncio.wait_for(client.process.wait(), 60) == 0
    finally:
        await client.close()
    answers = [m for m in map(json.loads, rest.splitlines()) if m.get("id") == 7]
    assert len(answers) == 1, answers
    [answer] = answers
    assert "cancelled" in json.dumps(answer) or answer.get("error", {}).get("code") == -32000


async def test_a_call_cancelled_before_its_first_step_is_answered_once() -> None:
    """The input ends in the same turn as a call arrives: its task is cancelled before it
    ran a line, so it cannot answer itself; the front answers it, once."""
    from lsp_server.mcp.stdio.fast import FastPath

    sent: list[dict[str, Any]] = []

    async def send(data: bytes) -> None:
        sent.append(json.loads(data))

    async def no_serializer() -> Any:
        raise AssertionError("nothing to serialize")

    fast = FastPath(cast(Any, None), "2025-06-18", {}, send, lambda: None, no_serializer)
    call = {"name": "read_file", "arguments": {"path": "x"}}
    line = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
    assert fast.take(line.encode())
    await fast.close()
    error = {"code": -32000, "message": "Connection closed"}
    assert sent == [{"jsonrpc": "2.0", "id": 3, "error": error}]
