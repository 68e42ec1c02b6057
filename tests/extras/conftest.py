"""Fixtures of the extras tests. The network fence: only loopback traffic, fake DNS for test names.

`socket.socket.connect`/`connect_ex` are replaced (a real-part shim, not a mock of the code
under test): any attempt to connect to a non-loopback address raises AssertionError BEFORE
the system call, so no packet can leave the machine, and the attempt is recorded so the
test fails even if the code under test swallowed the error. `socket.getaddrinfo` answers
from a table for test names and refuses to look up anything else on the real network.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any

import pytest

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
