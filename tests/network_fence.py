"""The network fence for tests that fetch: only loopback traffic, fake DNS for test names.

`socket.socket.connect`/`connect_ex` are replaced (a real-part shim, not a mock of the code
under test): any attempt to connect to a non-loopback address raises AssertionError BEFORE
the system call, so no packet can leave the machine, and the attempt is recorded so the
test fails even if the code under test swallowed the error. `socket.getaddrinfo` answers
from a table for test names and refuses to look up anything else on the real network.
"""

from __future__ import annotations

import http.server
import ipaddress
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.helpers import loopback_http

Answer = list[str] | Callable[[], list[str]]


class NetworkFence:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: dict[str, Answer] = {}
        self.lookups: list[str] = []
        self.blocked_connects: list[Any] = []
        self.connects: list[Any] = []
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex
        real_getaddrinfo = socket.getaddrinfo

        def check(sock: socket.socket, address: Any) -> None:
            if sock.family not in (socket.AF_INET, socket.AF_INET6):
                return
            host = str(address[0]).split("%", 1)[0]
            if not ipaddress.ip_address(host).is_loopback:
                self.blocked_connects.append(address)
                raise AssertionError(f"test tried to connect to non-loopback {address!r}")
            self.connects.append(address)

        def connect(sock: socket.socket, address: Any) -> None:
            check(sock, address)
            real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            check(sock, address)
            return real_connect_ex(sock, address)

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            name = host.decode() if isinstance(host, bytes) else str(host)
            self.lookups.append(name)
            try:
                literal = ipaddress.ip_address(name.strip("[]").split("%", 1)[0])
            except ValueError:
                literal = None
            if literal is not None or name == "localhost":
                # Literals need no DNS; localhost is answered from /etc/hosts.
                return real_getaddrinfo(host, port, *args, **kwargs)
            answer = self.names.get(name)
            if answer is None:
                raise AssertionError(f"test tried to resolve a real name {name!r}")
            addresses = answer() if callable(answer) else answer
            return [_addrinfo(address, int(port or 0)) for address in addresses]

        monkeypatch.setattr(socket.socket, "connect", connect)
        monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    def assert_clean(self) -> None:
        attempted = self.blocked_connects
        assert attempted == [], f"non-loopback connects attempted: {attempted}"


def _addrinfo(address: str, port: int) -> tuple[Any, ...]:
    ip = ipaddress.ip_address(address)
    if ip.version == 4:
        return (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))
    return (socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port, 0, 0))


@pytest.fixture
def fence(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Only loopback connections; names from `fence.names`. Fails the test on any other."""
    network = NetworkFence(monkeypatch)
    yield network
    network.assert_clean()


PAGE = """<!doctype html>
<html><head><title>Release notes</title><style>body { color: red }</style>
<script>document.write("tracking")</script></head>
<body><h1>Release 2.0</h1><p>Faster <b>startup</b> and a <a href="/docs/new.html">new guide</a>.</p>
<ul><li>fixed crash</li><li>new API</li></ul></body></html>"""

REDIRECTS = {
    "/to-metadata": "http://169.254.169.254/latest/meta-data/",
    "/to-private": "http://10.0.0.1/admin",
    "/to-mapped": "http://[::ffff:10.0.0.1]/",
    "/to-ula": "http://[fd00::1]/",
    "/to-internal-name": "http://intranet.test/",
    "/to-page": "/page.html",
}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path in REDIRECTS:
            self.send_response(302)
            self.send_header("Location", REDIRECTS[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/page.html":
            self._send(200, "text/html; charset=utf-8", PAGE.encode())
        elif self.path == "/host":
            self._send(200, "text/plain", f"host={self.headers['Host']}".encode())
        elif self.path == "/big":
            self._send(200, "text/plain", b"0123456789abcdef\n" * 200_000)
        elif self.path == "/latin1":
            self._send(200, "text/html; charset=iso-8859-1", "<p>café crème</p>".encode("latin-1"))
        elif self.path == "/image":
            self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
        else:
            self._send(404, "text/html", b"<h1>Not here</h1>")


@pytest.fixture
def site() -> Iterator[str]:
    with loopback_http(Handler) as url:
        yield url
