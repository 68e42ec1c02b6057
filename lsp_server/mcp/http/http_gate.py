"""Who may talk to `toolhost mcp --http`: the address it may bind (loopback only) and the
check every HTTP request passes before the MCP SDK sees it.

A request must name this server in `Host` (a DNS-rebinding page names its own host), carry
this server's own origin in `Origin` when it has one (a browser page on any other origin,
other local ports included, is refused), and carry the bearer token of the server's 0600
token file. Refusals are plain JSON-RPC error bodies with the HTTP status that says why:
421 (Host), 403 (Origin), 401 (token, with `WWW-Authenticate: Bearer`).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import secrets
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

REFUSED = -32600  # JSON-RPC "invalid request": the HTTP status says which check failed


class NotLoopback(ValueError):
    """`--http` named an address toolhost will not listen on."""


def parse_address(text: str) -> tuple[str, int]:
    """`127.0.0.1:PORT`, `[::1]:PORT` or `localhost:PORT` as (IP literal, port); anything that
    is not a loopback address is refused (toolhost never listens beyond this machine)."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise NotLoopback(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:8765)")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host == "localhost":
        host = "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise NotLoopback(
            f"{host!r} is not a loopback address: toolhost mcp --http listens on 127.0.0.1, "
            "::1 or localhost only"
        ) from None
    if not address.is_loopback:
        raise NotLoopback(
            f"{host} is not a loopback address: toolhost mcp --http listens on 127.0.0.1, ::1 "
            "or localhost only (a token sent over a network in clear text is no secret)"
        )
    return str(address), int(port_text)


def authority(host: str, port: int) -> str:
    """How a client writes this address in a URL or a Host header."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def allowed_hosts(host: str, port: int) -> list[str]:
    """Host header values naming this server: its address, and localhost for a loopback one."""
    return [authority(host, port), f"localhost:{port}"]


class HttpGate:
    """ASGI middleware in front of the SDK's Streamable HTTP app."""

    def __init__(self, app: ASGIApp, token: str, host: str, port: int) -> None:
        self._app = app
        self._token = token.encode()
        self._hosts = set(allowed_hosts(host, port))
        self._origins = {f"http://{name}" for name in self._hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: the SDK's session manager starts and stops
            await self._app(scope, receive, send)
            return
        refusal = self.check(Headers(scope=scope))
        if refusal is None:
            await self._app(scope, receive, send)
            return
        status, text = refusal
        client = scope.get("client")
        log.warning("refused an HTTP request from %s: %s", client, text)
        await _send_refusal(send, status, text)

    def check(self, headers: Headers) -> tuple[int, str] | None:
        """(status, message) for a request that must not reach the SDK, else None."""
        host = headers.get("host")
        if host not in self._hosts:
            return 421, (
                f"toolhost: refused: Host {host!r} does not name this server "
                f"(expected one of {', '.join(sorted(self._hosts))})"
            )
        origin = headers.get("origin")
        if origin is not None and origin not in self._origins:
            return 403, f"toolhost: refused: requests from origin {origin!r} are not accepted"
        scheme, _, given = (headers.get("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(
            given.strip().encode(), self._token
        ):
            return 401, (
                "toolhost: refused: missing or wrong bearer token (send `Authorization: Bearer "
                "<token>` with the token from the file `toolhost mcp --http` names at start)"
            )
        return None


async def _send_refusal(send: Send, status: int, text: str) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": REFUSED, "message": text}}
    ).encode()
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="toolhost"'))
    start: dict[str, Any] = {"type": "http.response.start", "status": status, "headers": headers}
    await send(start)
    await send({"type": "http.response.body", "body": body})
