"""A FAKE language server (named as such) for the lsp.request_failed test: it initializes,
says it has listed its files (pyright's readiness line), and answers every textDocument
request with a JSON-RPC error. Real servers do not fail a well-formed request on demand."""

from __future__ import annotations

import json
import sys
from typing import Any


def read_message() -> dict[str, Any] | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(sys.stdin.buffer.read(length))
    return message


def send(message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    sys.stdout.buffer.flush()


def main() -> None:
    capabilities = {
        "textDocumentSync": 1,
        "definitionProvider": True,
        "referencesProvider": True,
        "hoverProvider": True,
    }
    while (message := read_message()) is not None:
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            send({"id": ident, "result": {"capabilities": capabilities}})
        elif method == "initialized":
            note = {"type": 3, "message": "Found 1 source file"}
            send({"method": "window/logMessage", "params": note})
        elif method == "shutdown":
            send({"id": ident, "result": None})
        elif method == "exit":
            return
        elif ident is not None and "method" in message:
            error = {"code": -32602, "message": "FAKE: cannot resolve this position (on purpose)"}
            send({"id": ident, "error": error})


if __name__ == "__main__":
    main()
