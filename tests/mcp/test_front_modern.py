"""MCP 2026-07-28 (no `initialize`: Claude Code opens with `server/discover`, and each request
names its revision, client and capabilities in `_meta`): `toolhost mcp`'s front answers the
discover and plain tools/list requests as the SDK does, before the SDK is loaded
(mcp/stdio/handshake.py), and leaves anything odd to the SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from lsp_server.core.contract import Surface
from lsp_server.mcp.calls.tool_calls import Calls
from lsp_server.mcp.listing_cache import Listing, ListingCache
from lsp_server.mcp.stdio import front, handshake
from tests.mcp.clients import answered_without_sdk, sdk_answer, sdk_answers

CLAUDE_CODE = {
    "name": "claude-code",
    "title": "Claude Code",
    "version": "2.1.328",
    "description": "Anthropic's agentic coding tool",
    "websiteUrl": "https://claude.com/claude-code",
}
CLIENTS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (CLAUDE_CODE, {"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}}),
    ({"name": "plain", "version": "1"}, {}),
    ({"name": "forms", "version": "0.1", "title": "Forms"}, {"elicitation": {}, "sampling": {}}),
]


def meta(
    info: dict[str, Any] = CLAUDE_CODE,
    capabilities: dict[str, Any] | None = None,
    version: str = "2026-07-28",
) -> dict[str, Any]:
    return {
        handshake.VERSION_KEY: version,
        handshake.CLIENT_INFO_KEY: info,
        handshake.CLIENT_CAPABILITIES_KEY: capabilities or {},
    }


def request(method: str, message_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}


def test_the_front_knows_the_sdks_modern_revisions_and_keys() -> None:
    assert handshake.MODERN_VERSIONS == MODERN_PROTOCOL_VERSIONS
    assert handshake.VERSION_KEY == types.PROTOCOL_VERSION_META_KEY
    assert handshake.CLIENT_INFO_KEY == types.CLIENT_INFO_META_KEY
    assert handshake.CLIENT_CAPABILITIES_KEY == types.CLIENT_CAPABILITIES_META_KEY
    assert handshake.SERVER_INFO_KEY == types.SERVER_INFO_META_KEY


@pytest.mark.parametrize(("info", "capabilities"), CLIENTS)
async def test_the_front_answers_discover_as_the_sdk_does(
    ws: Path, info: dict[str, Any], capabilities: dict[str, Any]
) -> None:
    for message_id in ("server-discover-probe-1", 7):
        message = request("server/discover", message_id, {"_meta": meta(info, capabilities)})
        opened = handshake.opening(message)
        assert opened is not None and opened.modern
        assert opened.answer == await sdk_answer(ws, message)


@pytest.mark.parametrize("surface", ["full", "core", "minimal"])
@pytest.mark.parametrize("own", [{}, {"progressToken": 7}], ids=["opening", "with-token"])
async def test_a_plain_listing_is_the_sdks_answer(
    ws: Path, tmp_path: Path, surface: Surface, own: dict[str, Any]
) -> None:
    """discover, then tools/list as Claude Code sends it (the same `_meta`, or with a key of
    the client's own beside it): the front's answer is the SDK's, on every surface."""
    discover = request("server/discover", 1, {"_meta": meta()})
    listing = request("tools/list", 0, {"_meta": {**meta(), **own}})
    opened = handshake.opening(discover)
    assert opened is not None and opened.takes_listing(listing)
    made = await Listing(ListingCache(tmp_path, "key"), Calls(ws, surface, "", "never")).result()
    answers = await sdk_answers(ws, [discover, listing], surface)
    assert opened.listing_answer(0, made) == answers[1]


@pytest.mark.parametrize(
    "odd",
    [
        {"version": "2026-01-01"},  # a revision the SDK does not serve: its error names them
        {"info": {"name": "no version"}},
        {"info": {**CLAUDE_CODE, "icons": [{"src": "https://example.invalid/i.png"}]}},
        {"capabilities": {"roots": "yes"}},
    ],
)
def test_an_odd_discover_is_left_to_the_sdk(odd: dict[str, Any]) -> None:
    message = request("server/discover", 1, {"_meta": meta(**odd)})
    assert handshake.opening(message) is None


def test_other_shapes_are_left_to_the_sdk() -> None:
    good = meta()
    assert handshake.opening(request("server/discover", 1, {"_meta": good, "x": 1})) is None
    assert handshake.opening(request("server/discover", 1, {"_meta": {**good, "y": 2}})) is None
    assert handshake.opening(request("server/discover", True, {"_meta": good})) is None
    assert handshake.opening(request("tools/list", 1, {"_meta": good})) is None
    opened = handshake.opening(request("server/discover", 1, {"_meta": good}))
    assert opened is not None
    other_client = meta({"name": "other", "version": "1"})
    assert not opened.takes_listing(request("tools/list", 2, {"_meta": other_client}))
    assert not opened.takes_listing(request("tools/list", 2, {"_meta": good, "cursor": "c"}))
    with_token = {**good, "progressToken": 2}
    assert opened.takes_listing(request("tools/list", 2, {"_meta": with_token}))
    assert not opened.takes_listing(request("tools/list", 2, {}))


def test_a_call_repeats_the_opening_with_the_clients_own_keys_beside_it() -> None:
    """Claude Code's calls carry its tool use id and a progress token beside the opening's keys:
    still the connection's; another client, revision or protocol key is the SDK's to read."""
    opened = meta()
    assert handshake.repeats_opening(opened, opened)
    claude_call = {**opened, "claudecode/toolUseId": "toolu_01", "progressToken": 3}
    assert handshake.repeats_opening(claude_call, opened)
    assert not handshake.repeats_opening(meta({"name": "other", "version": "1"}), opened)
    assert not handshake.repeats_opening(meta(version="2099-01-01"), opened)
    assert not handshake.repeats_opening(meta(capabilities={"sampling": {}}), opened)
    assert not handshake.repeats_opening({**opened, "io.modelcontextprotocol/x": 1}, opened)
    assert not handshake.repeats_opening({"progressToken": 3}, opened)


async def test_claude_codes_opening_is_answered_before_the_sdk_is_loaded(
    ws: Path, tmp_path: Path
) -> None:
    """server/discover and tools/list as Claude Code 2.1.328 sends them, answered while the
    SDK cannot load, with the SDK's answers; the listing is kept for the next start."""
    cache = front.ListingCache.of("2026-07-28", "full")
    cache.path.unlink(missing_ok=True)
    claude = meta(
        CLAUDE_CODE, {"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}}
    )
    opening = [
        request("server/discover", "server-discover-probe-1", {"_meta": claude}),
        {"method": "tools/list", "jsonrpc": "2.0", "id": 0, "params": {"_meta": claude}},
    ]
    answers = await answered_without_sdk(ws, tmp_path, opening, 2)
    assert answers == await sdk_answers(ws, opening)
    assert cache.load() == {"tools": answers[1]["result"]["tools"]}
