"""On MCP 2026-07-28 (Claude Code's revision) plain `tools/call`s are the front's too
(mcp/stdio/fast.py): the bytes on the wire are the SDK's for the same calls, an approval form comes
back as `input_required` and the client's retry with its answer is resumed by the SDK's
handler from the round trips the front's call started, and a call and its form run while the
SDK has not loaded."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lsp_server.mcp.stdio import handshake
from tests.mcp.clients import blocked_sdk, spawn_mcp
from tests.mcp.fast_calls import ALLOW, CALLS, CLIENT, VOLATILE, line_of, masked, workspace

MODERN_VOLATILE = [
    *VOLATILE,
    (re.compile(rb'"requestState":"[^"]+"'), b'"requestState":"STATE"'),
]


FORMS = {"elicitation": {"form": {}}}
# What Claude Code adds to each call's `_meta` besides the connection's opening.
CLAUDE_CODE_EXTRAS = {"claudecode/toolUseId": "toolu_00000001", "progressToken": 1}


def meta(info: dict[str, Any], capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        handshake.VERSION_KEY: "2026-07-28",
        handshake.CLIENT_INFO_KEY: info,
        handshake.CLIENT_CAPABILITIES_KEY: FORMS if capabilities is None else capabilities,
    }


async def transcript(root: Path, via_sdk: bool, capabilities: dict[str, Any]) -> list[bytes]:
    """Every line the server writes for CALLS on 2026-07-28, each call's `_meta` the opening's
    with Claude Code's own keys (or the call's) beside it, a form answered by the client's
    retry. `via_sdk`: client information the front leaves to the SDK (an `icons` list), so
    that every answer is the SDK's."""
    workspace(root)
    client = await spawn_mcp(root)
    envelope = meta({**CLIENT, "icons": []} if via_sdk else CLIENT, capabilities)
    lines = []
    try:
        discover = {"jsonrpc": "2.0", "id": 0, "method": "server/discover"}
        await client.send({**discover, "params": {"_meta": envelope}})
        lines.append(await line_of(client))
        listing = {"jsonrpc": "2.0", "id": "l", "method": "tools/list"}
        await client.send({**listing, "params": {"_meta": envelope}})
        lines.append(await line_of(client))
        for message_id, call, form in CALLS:
            own = call.get("_meta", {**CLAUDE_CODE_EXTRAS, "progressToken": f"t{message_id}"})
            params = {**call, "_meta": {**own, **envelope}}
            while True:
                request = {"jsonrpc": "2.0", "id": message_id, "method": "tools/call"}
                await client.send({**request, "params": params})
                line = await line_of(client)
                while b'"notifications/progress"' in line:
                    lines.append(line)
                    line = await line_of(client)
                lines.append(line)
                result = json.loads(line).get("result", {})
                if result.get("resultType") != "input_required":
                    break
                params = {
                    **params,
                    "requestState": result["requestState"],
                    "inputResponses": {"approval": form["result"]},
                }
    finally:
        await client.close()
    return masked(lines, MODERN_VOLATILE)


@pytest.mark.slow
@pytest.mark.parametrize("capabilities", [FORMS, {}], ids=["forms", "no-forms"])
async def test_plain_calls_answer_the_sdks_bytes_on_2026_07_28(
    ws: Path, capabilities: dict[str, Any]
) -> None:
    fast = await transcript(ws, via_sdk=False, capabilities=capabilities)
    sdk = await transcript(ws, via_sdk=True, capabilities=capabilities)
    assert len(fast) == len(sdk)
    assert json.loads(fast[1]) == json.loads(sdk[1])  # tools/list: the registry's member order
    for ours, theirs in zip([fast[0], *fast[2:]], [sdk[0], *sdk[2:]], strict=True):
        assert ours == theirs
    answers = {}
    for message in map(json.loads, fast):
        if "method" not in message and message.get("result", {}).get("resultType") != (
            "input_required"
        ):
            answers[message["id"]] = message
    assert answers[4]["error"]["code"] == -32602
    assert sum(b'"notifications/progress"' in line for line in fast) == 1  # the slow bash
    if capabilities:  # three forms; the edit allowed, the write declined
        assert sum(b'"input_required"' in line for line in fast) == 3
        assert answers[7]["result"]["isError"] is False
        assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"
    else:  # nobody to ask: refused, and the model is told how to go on
        assert b'"input_required"' not in b"".join(fast)
        assert answers[7]["result"]["isError"] is True
        assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"
    assert answers[8]["result"]["isError"] is True and not (ws / "new.txt").exists()
    assert answers[13]["result"]["content"][1]["type"] == "image"
    assert all(
        answer.get("result", {}).get("_meta", {}).get(handshake.SERVER_INFO_KEY)
        for answer in answers.values()
        if "result" in answer
    )


async def test_a_plain_call_runs_before_the_sdk_has_loaded_on_2026_07_28(
    ws: Path, tmp_path: Path
) -> None:
    """As Claude Code calls: the opening's `_meta` with its tool use id and a progress token."""
    envelope = meta(CLIENT)
    client = await spawn_mcp(ws, blocked_sdk(tmp_path))
    try:
        await client.request("server/discover", {"_meta": envelope})
        read = await client.request(
            "tools/call",
            {
                "name": "read_file",
                "arguments": {"path": "hello.txt"},
                "_meta": {**envelope, **CLAUDE_CODE_EXTRAS},
            },
        )
        assert read["result"]["resultType"] == "complete"
        assert "hello from the fixture" in read["result"]["content"][0]["text"]
        write = {"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}
        asked = await client.request("tools/call", {**write, "_meta": envelope})
        assert asked["result"]["resultType"] == "input_required", asked
        form = asked["result"]["inputRequests"]["approval"]
        assert form["method"] == "elicitation/create" and "new.txt" in form["params"]["message"]
    finally:
        await client.close()


async def test_a_call_that_asked_outlives_its_answered_request(ws: Path) -> None:
    """A write's form goes back as input_required while the call waits on in the front: a
    cancellation of that answered request is void (as MCP has it), and the retry with the
    answer lands the write."""
    envelope = meta(CLIENT)
    client = await spawn_mcp(ws)
    try:
        await client.request("server/discover", {"_meta": envelope})
        write = {"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}
        asked = await client.request("tools/call", {**write, "_meta": envelope})
        assert asked["result"]["resultType"] == "input_required", asked
        cancel = {"requestId": client.next_id}
        await client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        retry = {
            **write,
            "_meta": envelope,
            "requestState": asked["result"]["requestState"],
            "inputResponses": {"approval": ALLOW["result"]},
        }
        done = await client.request("tools/call", retry)
        assert done["result"]["isError"] is False, done
        assert (ws / "new.txt").read_text() == "x\n"
    finally:
        await client.close()
