"""A raw JSON-RPC client over a child's pipes: frames written and read by hand, no library
in between, so that a measured round trip is the server's own cost. LSP frames
(Content-Length headers) by default; `framing="line"` is MCP's stdio framing (one JSON
message per line)."""

from __future__ import annotations

import json
import subprocess
from typing import Any, Literal


class RawClient:
    def __init__(
        self, command: list[str], framing: Literal["lsp", "line"] = "lsp", **popen: Any
    ) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **popen
        )
        self.framing = framing
        self._next_id = 0
        self._skipped: list[str] = []  # notifications read while waiting for an answer

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        if self.framing == "line":
            self.process.stdin.write(body + b"\n")
        else:
            self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def read(self) -> dict[str, Any]:
        stream = self.process.stdout
        assert stream is not None
        if self.framing == "line":
            while True:
                line = stream.readline()
                if not line:
                    raise EOFError("the server closed its output")
                if line.strip():
                    parsed: dict[str, Any] = json.loads(line)
                    return parsed
        length = 0
        while True:
            line = stream.readline()
            if not line:
                raise EOFError("the server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(stream.read(length))
        return message

    def request(self, method: str, params: Any) -> Any:
        """Send a request and return its result; notifications and server requests that
        arrive meanwhile are skipped (a server request gets a null answer)."""
        self._next_id += 1
        wanted = self._next_id
        self.send({"id": wanted, "method": method, "params": params})
        while True:
            message = self.read()
            if "method" in message:
                if "id" in message:
                    self.send({"id": message["id"], "result": None})
                else:
                    self._skipped.append(message["method"])
                continue
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message.get("result")

    def wait_for(self, method: str) -> None:
        """Until a notification of `method` has arrived (now or while an earlier request
        waited for its answer); the others are skipped."""
        while method not in self._skipped:
            message = self.read()
            if "method" in message and "id" not in message:
                self._skipped.append(message["method"])
        self._skipped.clear()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def close(self) -> None:
        try:
            if self.framing == "line":  # MCP has no shutdown request: closing stdin ends it
                assert self.process.stdin is not None
                self.process.stdin.close()
            else:
                self.request("shutdown", None)
                self.notify("exit", None)
        except (EOFError, BrokenPipeError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
