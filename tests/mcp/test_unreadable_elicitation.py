"""An elicitation answer toolhost cannot read is a denial at once, not a wait: a raw MCP
client (the SDK's own client would not send these) answers the approval form of a real
`toolhost mcp` with each malformed shape while the approval timeout is an hour. A call that
waited would not answer within the read bound, and would say "no answer within 3600"."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from tests.mcp.clients import toolhost_command

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


class RawClient:
    """Newline-delimited JSON-RPC to `toolhost mcp`, answering the server's requests by hand."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 100

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def next_message(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        # A generous bound for a busy machine, not a timing assertion.
        line = await asyncio.wait_for(self.process.stdout.readline(), 60)
        assert line, "the MCP server closed its output: it died"
        message: dict[str, Any] = json.loads(line)
        return message

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while (message := await self.next_message()).get("id") != self.next_id or (
            "method" in message
        ):
            pass
        return message

    async def call_answering_the_form(self, name: str, arguments: Any, answer: Any) -> Any:
        """tools/call; its elicitation/create is answered with `answer` (a response body)."""
        self.next_id += 1
        call_id = self.next_id
        params = {"name": name, "arguments": arguments}
        await self.send({"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": params})
        while True:
            message = await self.next_message()
            if message.get("method") == "elicitation/create":
                await self.send({"jsonrpc": "2.0", "id": message["id"], **answer})
            elif message.get("id") == call_id and "method" not in message:
                return message


async def start(root: Path, config_home: Path) -> RawClient:
    command = toolhost_command()
    process = await asyncio.create_subprocess_exec(
        *command,
        "mcp",
        "--root",
        str(root),
        "--attach",
        "never",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "XDG_CONFIG_HOME": str(config_home)},
    )
    client = RawClient(process)
    init = await client.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    )
    assert init["result"]["protocolVersion"] == "2025-11-25"
    await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return client


async def test_each_malformed_form_answer_is_a_denial_at_once(ws: Path, tmp_path: Path) -> None:
    config_home = tmp_path / "config"
    (config_home / "toolhost").mkdir(parents=True)
    (config_home / "toolhost" / "config.toml").write_text(
        "[policy]\napproval_timeout_seconds = 3600\n", encoding="utf-8"
    )
    client = await start(ws, config_home)
    try:
        for number, (answer, quoted) in enumerate(MALFORMED):
            arguments = {"path": f"f{number}.txt", "content": "x\n"}
            reply = await client.call_answering_the_form("write_file", arguments, answer)
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
        reply = await client.call_answering_the_form("write_file", arguments, good)
        assert reply["result"]["isError"] is False, reply
        assert (ws / "fine.txt").read_text() == "x\n"
    finally:
        client.process.kill()
        await client.process.wait()
