"""What `toolhost mcp`'s front (mcp/stdio/front.py) answers before the SDK is loaded, with the
standard library only: the opening request of a connection (`initialize` of the handshake
revisions, `server/discover` of 2026-07-28, which Claude Code opens with) and then plain
tools/list requests. Each answer is the SDK's own, member for member
(tests/mcp/test_front.py, test_front_modern.py compare them); anything the SDK might answer
otherwise (odd params, another revision or client) returns None and is left to the SDK.
"""

from __future__ import annotations

from typing import Any

from lsp_server.mcp.server_info import CAPABILITIES, INSTRUCTIONS, server_info

# The SDK's HANDSHAKE_PROTOCOL_VERSIONS (mcp_types.version), oldest first: the revisions
# that open with `initialize`. The newest is the counter-offer to any other version.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# The SDK's MODERN_PROTOCOL_VERSIONS: no `initialize`; each request names its revision, its
# client and the client's capabilities in `_meta` under these keys (mcp_types).
MODERN_VERSIONS = ("2026-07-28",)
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
# What the SDK's runner adds to every 2026-07-28 result of toolhost's server.
MODERN_CACHE_HINTS = {"cacheScope": "private", "ttlMs": 0}


class Opening:
    """The front's answer to a connection's opening request, and how it answers a plain
    tools/list on that connection."""

    def __init__(self, answer: dict[str, Any], version: str, meta: dict[str, Any] | None) -> None:
        self.answer = answer
        self.version = version
        self.meta = meta
        """2026-07-28: the opening's `_meta`, which a plain tools/list repeats; None before."""

    @property
    def modern(self) -> bool:
        return self.meta is not None

    def client_params(self, message: dict[str, Any]) -> dict[str, Any]:
        """The client's `clientInfo` and `capabilities`, as `initialize` names them."""
        if self.meta is None:
            params: dict[str, Any] = message["params"]
            return params
        return {
            "clientInfo": self.meta[CLIENT_INFO_KEY],
            "capabilities": self.meta[CLIENT_CAPABILITIES_KEY],
        }

    def takes_listing(self, message: Any) -> bool:
        """A tools/list the front answers (`listing_answer`)."""
        if not (
            isinstance(message, dict)
            and set(message) <= {"jsonrpc", "id", "method", "params"}
            and message.get("jsonrpc") == "2.0"
            and message.get("method") == "tools/list"
            and plain_id(message.get("id"))
        ):
            return False
        params = message.get("params")
        if self.meta is not None:
            return (
                isinstance(params, dict)
                and set(params) == {"_meta"}
                and isinstance(params["_meta"], dict)
                and repeats_opening(params["_meta"], self.meta)
            )
        return listing_params(params)

    def listing_answer(self, message_id: Any, listing: dict[str, Any]) -> dict[str, Any]:
        result = listing
        if self.meta is not None:  # the SDK's member order
            result = {
                "cacheScope": MODERN_CACHE_HINTS["cacheScope"],
                "resultType": "complete",
                **listing,
                "ttlMs": MODERN_CACHE_HINTS["ttlMs"],
                "_meta": {SERVER_INFO_KEY: server_info()},
            }
        return {"jsonrpc": "2.0", "id": message_id, "result": result}


def opening(message: Any) -> Opening | None:
    """The front's answer to a connection's first message, or None: the SDK answers it."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if not plain_id(message.get("id")) or not set(message) <= {"jsonrpc", "id", "method", "params"}:
        return None
    if message.get("method") == "initialize":
        answer = initialize_answer(message)
        if answer is None:
            return None
        return Opening(answer, answer["result"]["protocolVersion"], None)
    if message.get("method") == "server/discover":
        params = message.get("params")
        meta = (
            params.get("_meta") if isinstance(params, dict) and set(params) == {"_meta"} else None
        )
        if not _modern_meta(meta):
            return None
        assert isinstance(meta, dict)
        return Opening(_discover_answer(message["id"]), meta[VERSION_KEY], meta)
    return None


def initialize_answer(message: Any) -> dict[str, Any] | None:
    """The SDK's answer to this `initialize` request, or None when the SDK must answer it
    (not an `initialize`, or anything in it the SDK might refuse)."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    message_id = message.get("id")
    if message.get("jsonrpc") != "2.0" or not plain_id(message_id):
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not set(params) <= {
        "protocolVersion",
        "capabilities",
        "clientInfo",
    }:
        return None
    requested = params.get("protocolVersion")
    if not isinstance(requested, str) or not _plain_capabilities(params.get("capabilities")):
        return None
    if not _plain_client_info(params.get("clientInfo"), {"name", "version", "title"}):
        return None
    version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "result": {
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
            "protocolVersion": version,
            "serverInfo": server_info(),
        },
    }


def _discover_answer(message_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "result": {
            "cacheScope": MODERN_CACHE_HINTS["cacheScope"],
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
            "resultType": "complete",
            "supportedVersions": list(MODERN_VERSIONS),
            "ttlMs": MODERN_CACHE_HINTS["ttlMs"],
            "_meta": {SERVER_INFO_KEY: server_info()},
        },
    }


def _modern_meta(meta: Any) -> bool:
    """A request's `_meta` as Claude Code sends it: a revision the SDK serves, plain client
    information and capabilities, nothing else."""
    return (
        isinstance(meta, dict)
        and set(meta) == {VERSION_KEY, CLIENT_INFO_KEY, CLIENT_CAPABILITIES_KEY}
        and meta[VERSION_KEY] in MODERN_VERSIONS
        and _plain_capabilities(meta[CLIENT_CAPABILITIES_KEY])
        and _plain_client_info(
            meta[CLIENT_INFO_KEY], {"name", "version", "title", "description", "websiteUrl"}
        )
    )


def repeats_opening(meta: dict[str, Any], opened: dict[str, Any]) -> bool:
    """A request's `_meta` on 2026-07-28 that names the revision, client and capabilities the
    connection opened with, and adds none of the protocol's own keys (`io.modelcontextprotocol/`)
    besides: what a client adds of its own (Claude Code's `claudecode/toolUseId`, a
    `progressToken`) the SDK reads no differently on either path."""
    return all(meta.get(key, _ABSENT) == value for key, value in opened.items()) and not any(
        key.startswith(_PROTOCOL_PREFIX) and key not in opened for key in meta
    )


_PROTOCOL_PREFIX = "io.modelcontextprotocol/"
_ABSENT = object()


def stamped(result: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 result with the SDK's `serverInfo` stamp in its `_meta` (as its runner
    stamps every result of that revision: a `_meta` gets the key last, none gets one last)."""
    meta = result.get("_meta")
    if meta is None:
        result["_meta"] = {SERVER_INFO_KEY: server_info()}
    elif isinstance(meta, dict) and meta.get(SERVER_INFO_KEY) is None:
        result["_meta"] = {**meta, SERVER_INFO_KEY: server_info()}
    return result


def plain_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _plain_client_info(info: Any, allowed: set[str]) -> bool:
    """Strings only, a name and a version among them."""
    return (
        isinstance(info, dict)
        and set(info) <= allowed
        and {"name", "version"} <= set(info)
        and all(isinstance(value, str) for value in info.values())
    )


def _plain_capabilities(value: Any) -> bool:
    """Client capabilities of plain objects whose members are flags or objects."""
    if not isinstance(value, dict):
        return False
    for member in value.values():
        if not isinstance(member, dict):
            return False
        if not all(isinstance(inner, bool | dict) for inner in member.values()):
            return False
    return True


def is_initialized(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and set(message) <= {"jsonrpc", "method", "params"}
        and message.get("jsonrpc") == "2.0"
        and message.get("method") == "notifications/initialized"
        and message.get("params") in (None, {})
    )


def listing_params(params: Any) -> bool:
    """No params, or only a `_meta` (Codex sends a progress token; listing reports none)."""
    if params is None:
        return True
    return (
        isinstance(params, dict)
        and set(params) <= {"_meta"}
        and isinstance(params.get("_meta", {}), dict)
        and "progress_token" not in params.get("_meta", {})
    )
