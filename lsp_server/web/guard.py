"""Which addresses web_fetch may connect to, checked after resolution and at connect time.

A fetch must never reach the machine's own network: private ranges, link-local (cloud
metadata at 169.254.169.254), unique-local IPv6, loopback (unless config allows it for
tests), multicast, unspecified and other non-global ranges, including IPv4 addresses
hidden inside IPv6 forms (`::ffff:10.0.0.1`, NAT64, 6to4, Teredo).

`GuardedBackend` is an httpcore network backend: it resolves the host itself, checks
every answer, connects to the checked IP literal (so a DNS answer that changes between
check and connect cannot slip through) and checks the connected peer once more. TLS still
verifies the certificate against the URL's host name (httpcore passes the SNI name
separately from the connect address).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

import anyio
import attrs
import httpcore

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud instance-metadata endpoints that are not caught by the range checks
# (Azure's wire server is a public address) or deserve a precise message.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean ...
        "169.254.170.2",  # AWS ECS task metadata
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure wire server
        "192.0.0.192",  # Oracle Cloud
        "fd00:ec2::254",  # AWS IPv6 metadata
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")


class BlockedAddress(Exception):
    """A destination web_fetch refuses; the message names the host, the address and why."""

    def __init__(self, host: str, address: IPAddress | None, reason: str) -> None:
        where = f"{host} ({address})" if address is not None and str(address) != host else host
        super().__init__(f"{where} is {reason}")
        self.host = host
        self.address = address
        self.reason = reason


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """An IPv4 address carried inside an IPv6 one, and the form that carries it."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped, "IPv4-mapped"
    if address.sixtofour is not None:
        return address.sixtofour, "6to4"
    if address.teredo is not None:
        return address.teredo[1], "Teredo"
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF), "NAT64"
    packed = int(address)
    if packed >> 32 == 0 and packed > 1:  # deprecated IPv4-compatible ::a.b.c.d
        return ipaddress.IPv4Address(packed), "IPv4-compatible"
    return None


def blocked_reason(address: IPAddress, *, allow_loopback: bool) -> str | None:
    """Why a connection to `address` is refused, or None when it is allowed."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            address = ipaddress.IPv6Address(str(address).split("%", 1)[0])
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            inner, form = embedded
            reason = blocked_reason(inner, allow_loopback=allow_loopback)
            return None if reason is None else f"an {form} form of {inner}, which is {reason}"
    if address in METADATA_ADDRESSES:
        return "a cloud metadata endpoint"
    if address.is_loopback:
        return None if allow_loopback else "a loopback address (config web.allow_loopback is off)"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, ipaddress.IPv6Address) and address in _UNIQUE_LOCAL:
        return "a unique-local address"
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:
        return "a site-local address"
    if address.is_private:
        return "a private address"
    if not address.is_global:
        return "not a globally routable address"
    return None


@attrs.frozen
class AddressGuard:
    allow_loopback: bool = False

    def check(self, host: str, address: IPAddress) -> None:
        reason = blocked_reason(address, allow_loopback=self.allow_loopback)
        if reason is not None:
            raise BlockedAddress(host, address, reason)

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Every address the host resolves to, each checked; all must pass."""
        literal = _literal_address(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                answers = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError as exc:
                raise BlockedAddress(host, None, f"not resolvable ({exc})") from exc
            addresses = _unique(ipaddress.ip_address(info[4][0]) for info in answers)
            if not addresses:
                raise BlockedAddress(host, None, "not resolvable (no addresses)")
        # A name with one private answer among public ones is refused as a whole: a
        # client library may pick any of them.
        for address in addresses:
            self.check(host, address)
        return addresses


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _unique(addresses: Iterable[IPAddress]) -> list[IPAddress]:
    seen: list[IPAddress] = []
    for address in addresses:
        if address not in seen:
            seen.append(address)
    return seen


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves, checks and connects to the checked IP; verifies the peer after connect."""

    def __init__(
        self, guard: AddressGuard, inner: httpcore.AsyncNetworkBackend | None = None
    ) -> None:
        self._guard = guard
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self._guard.resolve(host, port)
        failure: Exception | None = None
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            try:
                self._check_peer(host, stream)
            except BlockedAddress:
                await stream.aclose()
                raise
            return stream
        assert failure is not None
        raise failure

    def _check_peer(self, host: str, stream: httpcore.AsyncNetworkStream) -> None:
        sock = stream.get_extra_info("socket")
        if sock is None:
            raise BlockedAddress(host, None, "connected, but its peer address is unknown")
        peer = ipaddress.ip_address(sock.getpeername()[0])
        self._guard.check(host, peer)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedAddress(path, None, "a Unix socket, which web_fetch never uses")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
