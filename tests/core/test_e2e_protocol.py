"""End to end over pytest-lsp against `toolhost serve` as a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types

from lsp_server.runtime.core.contract import canonical_json
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
