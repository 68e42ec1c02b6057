"""web_fetch against a real HTTP server on 127.0.0.1, and its address guard.

Every test runs inside the network fence (conftest.py): a connect to anything but loopback
raises before the system call and fails the test; names resolve only from the fence's table.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from lsp_server.core.errors import WEB_BLOCKED_ADDRESS, WEB_INVALID_URL, ToolError
from lsp_server.web.fetch import fetch
from lsp_server.web.guard import AddressGuard, BlockedAddress, GuardedBackend, blocked_reason
from lsp_server.web.text import render_page
from tests.network_fence import REDIRECTS

LOOPBACK_OK = AddressGuard(allow_loopback=True)


async def get(url: str, guard: AddressGuard = LOOPBACK_OK, max_bytes: int = 1024 * 1024) -> str:
    return render_page(await fetch(url, guard=guard, time_limit=15.0, max_bytes=max_bytes))


async def refused(url: str, guard: AddressGuard = LOOPBACK_OK) -> ToolError:
    with pytest.raises(ToolError) as info:
        await fetch(url, guard=guard, time_limit=15.0, max_bytes=1024)
    return info.value


async def test_html_becomes_readable_text(fence: Any, site: str) -> None:
    text = await get(f"{site}/page.html")
    assert text.startswith(f"GET {site}/page.html -> 200 OK\ncontent: text/html,")
    assert "# Release 2.0" in text
    assert "Faster **startup**" in text
    assert f"[new guide]({site}/docs/new.html)" in text
    assert "- fixed crash\n- new API" in text
    assert "tracking" not in text and "color: red" not in text and "<" not in text


async def test_body_cap_is_enforced_and_said(fence: Any, site: str) -> None:
    page = await fetch(f"{site}/big", guard=LOOPBACK_OK, time_limit=15.0, max_bytes=1024 * 1024)
    assert page.truncated and len(page.body) == 1024 * 1024
    text = render_page(page)
    assert "first 1048576 bytes, truncated" in text
    assert text.endswith("[body truncated at 1048576 bytes: the page is larger]")
    small = await get(f"{site}/big", max_bytes=100)
    assert "first 100 bytes, truncated" in small


async def test_charset_binary_and_relative_redirects(fence: Any, site: str) -> None:
    assert "café crème" in await get(f"{site}/latin1")
    assert "[binary content (image/png) not shown" in await get(f"{site}/image")
    text = await get(f"{site}/to-page")
    assert f"redirected from: {site}/to-page" in text and "# Release 2.0" in text


async def test_the_connection_goes_to_the_checked_address_with_the_original_host(
    fence: Any, site: str
) -> None:
    port = site.rsplit(":", 1)[1]
    fence.names["app.test"] = ["127.0.0.1"]
    text = await get(f"http://app.test:{port}/host")
    assert f"host=app.test:{port}" in text
    assert fence.connects and all(address[0] == "127.0.0.1" for address in fence.connects)


async def test_loopback_is_refused_unless_config_allows_it(fence: Any, site: str) -> None:
    error = await refused(f"{site}/page.html", guard=AddressGuard(allow_loopback=False))
    assert error.code == WEB_BLOCKED_ADDRESS and "loopback" in error.cause
    fence.names["localhost.test"] = ["::1"]
    error = await refused("http://localhost.test/", guard=AddressGuard())
    assert error.code == WEB_BLOCKED_ADDRESS
    assert fence.connects == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://10.0.0.1/", "private"),
        ("http://[::ffff:10.0.0.1]/", "IPv4-mapped form of 10.0.0.1, which is a private"),
        ("http://[::ffff:169.254.169.254]/", "cloud metadata"),
        ("http://[fd00::1]/", "unique-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://224.0.0.1/", "multicast"),
        ("http://[64:ff9b::a00:1]/", "NAT64 form of 10.0.0.1"),
        ("http://100.64.0.1/", "not a globally routable"),
    ],
)
async def test_internal_addresses_are_refused_before_any_connect(
    fence: Any, url: str, reason: str
) -> None:
    error = await refused(url)
    assert error.code == WEB_BLOCKED_ADDRESS and reason in error.cause
    assert fence.connects == []


async def test_names_resolving_to_internal_addresses_are_refused(fence: Any) -> None:
    fence.names["metadata.test"] = ["169.254.169.254"]
    fence.names["mixed.test"] = ["93.184.216.34", "10.1.2.3"]  # one bad answer is enough
    fence.names["mapped.test"] = ["::ffff:10.0.0.1"]
    for name, reason in [
        ("metadata.test", "cloud metadata"),
        ("mixed.test", "10.1.2.3) is a private"),
        ("mapped.test", "IPv4-mapped"),
    ]:
        error = await refused(f"http://{name}/")
        assert error.code == WEB_BLOCKED_ADDRESS and reason in error.cause
    assert fence.connects == []


@pytest.mark.parametrize("path", sorted(p for p in REDIRECTS if p != "/to-page"))
async def test_redirects_to_internal_addresses_are_refused(
    fence: Any, site: str, path: str
) -> None:
    fence.names["intranet.test"] = ["10.20.30.40"]
    error = await refused(f"{site}{path}")
    assert error.code == WEB_BLOCKED_ADDRESS
    assert f"reached by a redirect from {site}{path}" in error.cause
    # Only the local server was ever contacted.
    assert {address[0] for address in fence.connects} == {"127.0.0.1"}


async def test_a_dns_answer_that_changes_after_the_check_does_not_get_through(fence: Any) -> None:
    # First answer (the pre-request check) is public; the answer at connect time is
    # private. The connect-time check must refuse it; the fence fails the test if any
    # connect to either address is attempted.
    answers = iter([["93.184.216.34"], ["10.0.0.1"]])
    fence.names["rebind.test"] = lambda: next(answers)
    error = await refused("http://rebind.test/")
    assert error.code == WEB_BLOCKED_ADDRESS and "10.0.0.1" in error.cause
    assert fence.lookups.count("rebind.test") == 2
    assert fence.connects == []


async def test_bad_urls(fence: Any) -> None:
    for url in ["file:///etc/passwd", "ftp://example.test/", "no-scheme", "http://"]:
        error = await refused(url)
        assert error.code == WEB_INVALID_URL, url


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("::1", False),
        ("::ffff:127.0.0.1", False),
        ("192.168.1.1", False),
        ("172.16.0.1", False),
        ("169.254.170.2", False),
        ("168.63.129.16", False),
        ("fd00:ec2::254", False),
        ("fec0::1", False),
        ("2002:a00:1::", False),  # 6to4 around 10.0.0.1
        ("::10.0.0.1", False),  # deprecated IPv4-compatible form
        ("ff02::1", False),
        ("::", False),
    ],
)
def test_blocked_reason_table(address: str, allowed: bool) -> None:
    ip = ipaddress.ip_address(address)
    assert (blocked_reason(ip, allow_loopback=False) is None) is allowed
    if ip.is_loopback:
        assert blocked_reason(ip, allow_loopback=True) is None


class ResolverThatLies(AddressGuard):
    """A resolver bug stand-in: hands back loopback unchecked, so only the peer check is left."""

    async def resolve(self, host: str, port: int) -> list[Any]:
        return [ipaddress.ip_address("127.0.0.1")]


async def test_the_connected_peer_is_checked_again(fence: Any, site: str) -> None:
    port = int(site.rsplit(":", 1)[1])
    backend = GuardedBackend(ResolverThatLies(allow_loopback=False))
    with pytest.raises(BlockedAddress, match="loopback"):
        await backend.connect_tcp("app.test", port)
    assert fence.connects == [("127.0.0.1", port)]  # it connected, then refused the peer
