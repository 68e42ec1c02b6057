"""The SDK's 400 answers over HTTP, at the id of the request they answer.

The SDK's Streamable HTTP transport answers a body it cannot read (not JSON, nested too
deeply, a lone surrogate escape such as `"\\ud800"`, an id or params its models refuse)
with HTTP 400 and a JSON-RPC error at id null: a client matching answers to its requests
by id waits on that request for ever. The same body then gets the error the stdio face
gives it (mcp/unreadable_requests.py): at the request's own id, saying what
is wrong. Only a 400 is held back and read; every other answer passes as it is written.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lsp_server.mcp.unreadable_requests import unreadable_request

log = logging.getLogger(__name__)


class UnreadableAnswers:
    """ASGI middleware in front of the SDK's Streamable HTTP app."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return
        request: list[bytes] = []
        held: list[Message] = []

        async def read_body() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                request.append(message.get("body", b""))
            return message

        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 400:
                held.append(message)  # read whole before it goes out
                return
            if not held:
                await send(message)
                return
            held.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                for part in _answered(held, b"".join(request)):
                    await send(part)

        await self._app(scope, read_body, answer)


def _answered(held: list[Message], request: bytes) -> list[Message]:
    """The held 400 response, its JSON-RPC error moved to the request's id when it had
    none and the request shows one."""
    start, body = held[0], b"".join(part.get("body", b"") for part in held[1:])
    try:
        error: Any = json.loads(body)
        if not (isinstance(error, dict) and "error" in error and error.get("id") is None):
            return held
        better = unreadable_request(request.decode("utf-8", "replace"))
    except Exception:  # the SDK's answer stands
        log.debug("kept the SDK's 400 answer", exc_info=True)
        return held
    if better is None:
        return held
    better = better.rstrip(b"\n")
    headers = [
        (name, str(len(better)).encode() if name.lower() == b"content-length" else value)
        for name, value in start.get("headers", [])
    ]
    return [{**start, "headers": headers}, {"type": "http.response.body", "body": better}]
