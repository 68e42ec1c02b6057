"""One agent request through `toolhost acp`, the proxy an ACP editor starts in place of
its agent.

This file plays both ends. Run plainly, it is the editor: it starts
`toolhost acp -- python acp_read_file.py agent`, opens a session on examples/workspace
and sends one prompt. Run with `agent`, it is a tiny agent: on the prompt it asks its
client for README.md (ACP's fs/read_text_file), which toolhost answers through its
runtime, and says the text back. The editor prints what the agent said.

    .venv/bin/python examples/acp_read_file.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

WORKSPACE = Path(__file__).resolve().parent / "workspace"


def send(stream: TextIO, message: dict[str, Any]) -> None:
    """ACP is JSON-RPC, one message per line."""
    stream.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    stream.flush()


def receive(stream: TextIO) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(stream.readline())
    return message


def editor() -> None:
    # `toolhost acp -- <agent>`, run by this interpreter (--no-mcp: this agent has no use
    # for the MCP server toolhost would add to its sessions).
    command = [sys.executable, "-m", "lsp_server", "acp", "--no-mcp", "--"]
    agent = [sys.executable, __file__, "agent"]
    pipes = subprocess.PIPE
    with subprocess.Popen([*command, *agent], stdin=pipes, stdout=pipes, text=True) as toolhost:
        assert toolhost.stdin is not None and toolhost.stdout is not None

        def request(request_id: int, method: str, params: dict[str, Any]) -> Any:
            send(toolhost.stdin, {"id": request_id, "method": method, "params": params})
            while "result" not in (message := receive(toolhost.stdout)):
                update = message["params"]["update"]  # session/update, from the agent
                print(update["content"]["text"], end="")
            return message["result"]

        request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = request(2, "session/new", {"cwd": str(WORKSPACE), "mcpServers": []})
        prompt = [{"type": "text", "text": "README.md"}]
        request(3, "session/prompt", {"sessionId": session["sessionId"], "prompt": prompt})
        toolhost.stdin.close()


def agent() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message["method"], message["params"]
        if method == "initialize":
            result: dict[str, Any] = {"protocolVersion": 1, "agentCapabilities": {}}
        elif method == "session/new":
            result = {"sessionId": "example"}
        elif method == "session/prompt":
            session = params["sessionId"]
            path = WORKSPACE / params["prompt"][0]["text"]
            # The request toolhost answers itself: the runtime reads the file.
            read = {"sessionId": session, "path": str(path)}
            send(sys.stdout, {"id": "read-1", "method": "fs/read_text_file", "params": read})
            text = receive(sys.stdin)["result"]["content"]
            said = {"type": "text", "text": text}
            update = {
                "sessionId": session,
                "update": {"sessionUpdate": "agent_message_chunk", "content": said},
            }
            send(sys.stdout, {"method": "session/update", "params": update})
            result = {"stopReason": "end_turn"}
        send(sys.stdout, {"id": message["id"], "result": result})


if __name__ == "__main__":
    if sys.argv[1:] == ["agent"]:
        agent()
    else:
        editor()
