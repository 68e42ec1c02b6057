"""`shell.sandbox_network_allow`: which hosts a sandboxed command may reach through the
proxy without asking (docs/SANDBOX.md). Pure but for name resolution, which the caller
does (the proxy resolves names itself, never the command).

An entry is `host` (any port), `host:port`, `*.domain` (any name below it, any port) or
`*.domain:port`; IPv6 literals in brackets (`[::1]:8080`). A name is refused before it is
resolved unless an entry names it; a name that resolves to an address that is not global
(loopback, private, link-local, cloud metadata, CGNAT, multicast ...) is refused unless
that address is itself listed as a literal.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

import attrs

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
ASK_HINT = 'ask with sandbox: "network"'


@attrs.frozen
class AllowEntry:
    host: str
    """Lower-case name or IP literal (no brackets); "*.x" for a domain wildcard."""
    port: int | None

    def matches(self, host: str, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.host.startswith("*."):
            return host.endswith(self.host[1:]) and host != self.host[2:]
        return host == self.host


def split_host_port(text: str, default_port: int | None = None) -> tuple[str, int | None]:
    """`host:port`, `[v6]:port`, `host` -> (host lower-cased without brackets, port)."""
    text = text.strip()
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise ValueError(f"{text!r}: an IPv6 literal needs its closing ]")
        host, rest = text[1:end], text[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError(f"{text!r}: only :port may follow ]")
        port_text = rest[1:] if rest else ""
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    else:  # a bare name, or a bare IPv6 literal
        host, port_text = text, ""
    if not host:
        raise ValueError(f"{text!r}: no host")
    if not port_text:
        return host.lower().rstrip("."), default_port
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{text!r}: the port must be 1-65535")
    return host.lower().rstrip("."), int(port_text)


def parse_allow_list(
    entries: Iterable[str], problems: list[str] | None = None
) -> tuple[AllowEntry, ...]:
    parsed = []
    for entry in entries:
        try:
            host, port = split_host_port(entry)
        except ValueError as exc:
            if problems is not None:
                problems.append(f"shell.sandbox_network_allow: {exc}; entry ignored")
            continue
        parsed.append(AllowEntry(host, port))
    return tuple(parsed)


def literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


@attrs.frozen
class NetworkAllowList:
    entries: tuple[AllowEntry, ...] = ()

    def listed(self, host: str, port: int) -> bool:
        return any(entry.matches(host, port) for entry in self.entries)

    def refusal(self, host: str, port: int) -> str | None:
        """Why `host:port` is refused before resolving anything; None: resolve it."""
        if not self.listed(host, port):
            return "not in sandbox_network_allow"
        return None

    def usable(
        self, host: str, port: int, addresses: Sequence[str]
    ) -> tuple[list[str], str | None]:
        """The resolved addresses a connection may use, or why none may."""
        literal = literal_address(host)
        if literal is not None:
            return [str(literal)], None  # listed literally (refusal() passed)
        allowed = []
        for text in addresses:
            address = literal_address(text.split("%", 1)[0])
            if address is None:
                continue
            if address.is_global or self.listed(str(address), port):
                allowed.append(text)
        if allowed:
            return allowed, None
        if not addresses:
            return [], "the name does not resolve"
        return [], (
            f"it resolves to {addresses[0]}, a loopback, private, link-local or metadata "
            "address (list the address itself to allow it)"
        )


def blocked_line(host: str, port: int, reason: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"blocked: {shown}:{port} ({reason}); {ASK_HINT}"
