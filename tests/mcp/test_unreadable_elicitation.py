"""An elicitation answer toolhost cannot read is a denial at once, not a wait: a raw MCP
client (the SDK's own client would not send these) answers the approval form of a real
`toolhost mcp` with each malformed shape while the approval timeout is an hour. A call that
waited would not answer within the read bound, and would say "no answer within 3600"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.mcp.clients import RawMcp, raw_mcp

# (what the client answers elicitation/create with, how the result quotes it back)
MALFORMED: list[tuple[dict[str, Any], str]] = [
    ({"result": {}}, "{} (no action)"),  # not an ElicitResult
    ({"result": {"action": "maybe"}}, 'action = "maybe"'),
    ({"result": {"action": "accept"}}, '{"action": "accept", "content": null}'),
    ({"result": {"action": "accept", "content": {"decision": "maybe"}}}, '{"decision": "maybe"}'),
    ({"result": "accept"}, '"accept"'),  # the SDK's reader cannot parse these at all
    ({"result": 5}, "5"),
    ({"result": None}, "null"),
    ({"error": "declined"}, '"declined"'),
    ({"error": {}}, "{}"),
]


async def call_answering_the_form(client: RawMcp, name: str, arguments: Any, answer: Any) -> Any:
    """tools/call; its elicitation/create is answered with `answer` (a response body)."""
    client.next_id += 1
    call_id = client.next_id
    params = {"name": name, "arguments": arguments}
    await client.send({"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": params})
    while True:
        message = await client.next_message()
        if message.get("method") == "elicitation/create":
            await client.send({"jsonrpc": "2.0", "id": message["id"], **answer})
        elif message.get("id") == call_id and "method" not in message:
            return message


async def test_each_malformed_form_answer_is_a_denial_at_once(ws: Path, tmp_path: Path) -> None:
    config_home = tmp_path / "config"
    (config_home / "toolhost").mkdir(parents=True)
    (config_home / "toolhost" / "config.toml").write_text(
        "[policy]\napproval_timeout_seconds = 3600\n", encoding="utf-8"
    )
    client = await raw_mcp(
        ws, {"elicitation": {"form": {}}}, "raw", {"XDG_CONFIG_HOME": str(config_home)}
    )
    try:
        for number, (answer, quoted) in enumerate(MALFORMED):
            arguments = {"path": f"f{number}.txt", "content": "x\n"}
            reply = await call_answering_the_form(client, "write_file", arguments, answer)
            result = reply["result"]
            text = result["content"][0]["text"]
            assert result["isError"] is True, (answer, text)
            assert result["structuredContent"]["code"] == "permission.unreadable_answer", text
            expected = f"the MCP client gave an answer toolhost cannot read (it sent {quoted})"
            assert expected in text, (answer, text)
            assert "no answer within" not in text
            assert "tell the user" in result["structuredContent"]["recovery"]
            assert not (ws / f"f{number}.txt").exists()
        # The server goes on serving, and a readable answer still allows.
        good = {"result": {"action": "accept", "content": {"decision": "allow_once"}}}
        arguments = {"path": "fine.txt", "content": "x\n"}
        reply = await call_answering_the_form(client, "write_file", arguments, good)
        assert reply["result"]["isError"] is False, reply
        assert (ws / "fine.txt").read_text() == "x\n"
    finally:
        await client.close()
