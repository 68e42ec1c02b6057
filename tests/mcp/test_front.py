"""`toolhost mcp`'s front (mcp/stdio/front.py) answers `initialize` before the SDK is loaded: what
it answers is what the SDK answers, it imports nothing but the standard library, the SDK
still sees every message in order, and anything odd is left to the SDK."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from lsp_server.mcp.calls.tool_calls import Calls
from lsp_server.mcp.listing_cache import Listing, ListingCache
from lsp_server.mcp.stdio import front, handshake
from tests.mcp.clients import answered_without_sdk, sdk_answer, sdk_answers, spawn_mcp

if TYPE_CHECKING:
    from lsp_server.core.contract import Surface

CLIENT_INFO = {"name": "front-test", "version": "2.0"}
CAPABILITIES: list[dict[str, Any]] = [
    {},
    {"roots": {"listChanged": True}, "elicitation": {}},
    {"elicitation": {"form": {}, "url": {}}, "sampling": {}},
]


def initialize(version: str, capabilities: dict[str, Any], message_id: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": CLIENT_INFO,
        },
    }


def test_the_front_knows_the_sdks_handshake_revisions() -> None:
    assert handshake.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01"])
async def test_the_front_answers_initialize_as_the_sdk_does(ws: Path, version: str) -> None:
    for capabilities in CAPABILITIES:
        for message_id in (1, "init-7"):
            message = initialize(version, capabilities, message_id)
            assert handshake.initialize_answer(message) == await sdk_answer(ws, message)


@pytest.mark.parametrize(
    "odd",
    [
        {"clientInfo": None},
        {"clientInfo": {"name": "no version"}},
        {"protocolVersion": 20251125},
        {"capabilities": {"roots": "yes"}},
        {"capabilities": {"roots": {"listChanged": "maybe"}}},
        {"extra": 1},
    ],
)
def test_an_odd_initialize_is_left_to_the_sdk(odd: dict[str, Any]) -> None:
    message = initialize("2025-11-25", {})
    message["params"].update(odd)
    assert handshake.initialize_answer(message) is None
    assert handshake.initialize_answer({**initialize("2025-11-25", {}), "id": True}) is None
    assert handshake.initialize_answer({**initialize("2025-11-25", {}), "method": "ping"}) is None


def test_the_front_imports_the_standard_library_only() -> None:
    """What `toolhost mcp` imports before it can answer: no SDK, pydantic, attrs, toolhost's
    runtime (they load in the front's threads)."""
    code = (
        "import sys\n"
        "from lsp_server.cli import _parser\n"
        "_parser(('mcp',))\n"
        "import lsp_server.mcp.stdio.front\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    heavy = ("mcp", "mcp_types", "pydantic", "attr", "attrs", "cattrs", "lsprotocol", "anyio")
    assert [m for m in loaded if m.split(".")[0] in heavy] == []
    assert [m for m in loaded if m.startswith("lsp_server.")] == [
        "lsp_server.cli",
        "lsp_server.cli.mcp",
        "lsp_server.home",
        "lsp_server.home.keyed_cache",
        "lsp_server.mcp",
        "lsp_server.mcp.calls",
        "lsp_server.mcp.calls.call_path",
        "lsp_server.mcp.calls.progress_relay",
        "lsp_server.mcp.calls.tool_calls",
        "lsp_server.mcp.listing_cache",
        "lsp_server.mcp.sdk_json",
        "lsp_server.mcp.server_info",
        "lsp_server.mcp.stdio",
        "lsp_server.mcp.stdio.fast",
        "lsp_server.mcp.stdio.front",
        "lsp_server.mcp.stdio.handshake",
        "lsp_server.mcp.stdio.loader",
        "lsp_server.mcp.stdio.stdio_pipes",
        "lsp_server.warm",
        "lsp_server.warm.flag_help",
        "lsp_server.wire",
        "lsp_server.wire.private_stdio",
    ]


async def test_pipelined_messages_reach_the_sdk_in_order_with_one_initialize_answer(
    ws: Path,
) -> None:
    """initialize, initialized, tools/list and a call in one write, before the SDK is up:
    one answer each (the call, which the front runs, may overtake a tools/list that waits for
    the SDK: JSON-RPC answers in any order), and the SDK knows the client afterwards."""
    client = await spawn_mcp(ws)
    try:
        messages = [
            initialize("2025-06-18", {}, 1),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "hello.txt"}},
            },
        ]
        await client.send_bytes(b"\n".join(json.dumps(m).encode() for m in messages))
        answers = [await client.next_message() for _ in range(3)]
        assert answers[0]["id"] == 1
        answers.sort(key=lambda answer: answer["id"])
        assert [a["id"] for a in answers] == [1, 2, 3]
        assert answers[0] == handshake.initialize_answer(messages[0])
        assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
        assert any(t["name"] == "read_file" for t in answers[1]["result"]["tools"])
        assert "hello from the fixture" in answers[2]["result"]["content"][0]["text"]
        ping = await client.request("ping", {})
        assert ping["result"] == {}
    finally:
        await client.close()


async def test_an_odd_initialize_gets_the_sdks_own_answer(ws: Path) -> None:
    client = await spawn_mcp(ws)
    try:
        message = initialize("2025-11-25", {})
        del message["params"]["clientInfo"]
        await client.send(message)
        answer = await client.next_message()
        assert answer["id"] == 1
        assert answer["error"]["code"] == types.INVALID_PARAMS
        # Still served: a good initialize afterwards is answered once, by the SDK.
        await client.send(initialize("2025-11-25", {}, 2))
        again = await client.next_message()
        assert again == handshake.initialize_answer(initialize("2025-11-25", {}, 2))
    finally:
        await client.close()


def test_the_commands_surfaces_are_the_contracts() -> None:
    from lsp_server.cli.mcp import SURFACES
    from lsp_server.core.contract import SURFACES as CONTRACT_SURFACES

    assert SURFACES == CONTRACT_SURFACES


async def test_the_local_runtime_results_are_the_lsp_faces(ws: Path) -> None:
    """`toolhost mcp` turns results into JSON without lsprotocol: the same dicts."""
    from lsp_server.attach import wire
    from tests.helpers import call_tool, make_runtime

    runtime = make_runtime(ws)
    results = [
        await call_tool(runtime, "read_file", {"path": "hello.txt"}),
        await call_tool(runtime, "read_file", {"path": "missing.txt"}),
        await call_tool(runtime, "read_file", {"path": 3}),
        await call_tool(runtime, "nonsense", {}),
        await call_tool(
            runtime,
            "edit_file",
            {"path": "hello.txt", "old_string": "hello", "new_string": "bye"},
        ),
        await call_tool(runtime, "run_command", {"command": "echo hi"}),
    ]
    for result in results:
        assert wire.result_converter().unstructure(result) == wire.converter().unstructure(result)


def test_the_local_runtime_does_not_import_lsprotocol() -> None:
    code = (
        "import sys\n"
        "import lsp_server.mcp.server, lsp_server.mcp.calls.local, lsp_server.tools.registry\n"
        "from lsp_server.attach import wire\n"
        "wire.result_converter()\n"
        "print(' '.join(m for m in sys.modules if m.startswith('lsprotocol')))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert loaded == []


async def _listing_of_a_fresh_start(root: Path, version: str) -> tuple[dict[str, Any], ...]:
    """initialize, initialized and tools/list in one write, then a ping: the answers."""
    client = await spawn_mcp(root)
    try:
        messages = [
            initialize(version, {}, 1),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 9, "method": "ping"},
        ]
        await client.send_bytes(b"\n".join(json.dumps(m).encode() for m in messages))
        return tuple([await client.next_message() for _ in range(3)])
    finally:
        await client.close()


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
async def test_tools_list_from_the_cache_is_the_first_starts_answer(ws: Path, version: str) -> None:
    """The first start keeps its tools/list answer; the next one answers from it: the same
    answer, each request answered once."""
    cache = front.ListingCache.of(version, "full")
    cache.path.unlink(missing_ok=True)
    fresh = await _listing_of_a_fresh_start(ws, version)
    assert cache.load() == fresh[1]["result"]
    cached = await _listing_of_a_fresh_start(ws, version)
    assert [m["id"] for m in cached] == [1, "list", 9]
    assert cached == fresh


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
@pytest.mark.parametrize("surface", ["full", "core", "minimal"])
async def test_the_listing_made_from_the_registry_is_the_sdks_answer(
    ws: Path, tmp_path: Path, version: str, surface: Surface
) -> None:
    """What the front answers a tools/list with no listing kept is what the SDK's own server
    answers after the same handshake, on every revision and surface."""
    made = await Listing(ListingCache(tmp_path, "key"), Calls(ws, surface, "", "never")).result()
    opening = [
        initialize(version, {}),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    answers = await sdk_answers(ws, opening, surface)
    assert made == answers[1]["result"]
    assert ListingCache(tmp_path, "key").load() == made


async def test_a_first_start_lists_the_tools_before_the_sdk_is_loaded(
    ws: Path, tmp_path: Path
) -> None:
    """No listing kept yet (a first start, or the first after an upgrade): tools/list is
    answered while the SDK cannot load (Codex sends its first turn about a second after
    starting a server, with the tools it has by then), and kept for the next start."""
    cache = front.ListingCache.of("2025-06-18", "full")
    cache.path.unlink(missing_ok=True)
    opening = [
        initialize("2025-06-18", {}),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
    ]
    answers = await answered_without_sdk(ws, tmp_path, opening, 2)
    assert [answer["id"] for answer in answers] == [1, "list"]
    assert answers[1]["result"] == (await sdk_answers(ws, opening))[1]["result"]
    assert cache.load() == answers[1]["result"]


async def test_the_front_answers_tools_list_from_its_cache(ws: Path) -> None:
    """What the cache holds under the current key is what the client gets; a key of another
    surface or revision is not used."""
    cache = front.ListingCache.of("2025-11-25", "full")
    planted = {"tools": [{"name": "planted", "inputSchema": {"type": "object"}}]}
    cache.store(planted)
    answers = await _listing_of_a_fresh_start(ws, "2025-11-25")
    assert answers[1]["result"] == planted
    assert front.ListingCache.of("2025-06-18", "full").load() is None
    assert front.ListingCache.of("2025-11-25", "core").load() is None
    cache.path.unlink()


@pytest.mark.slow
async def test_a_large_message_is_read_whole(ws: Path) -> None:
    """The front reads lines of any length, as the SDK's transport did (70 MiB here)."""
    client = await spawn_mcp(ws)
    try:
        await client.send(initialize("2025-11-25", {}))
        assert (await client.next_message())["id"] == 1
        big = "x" * (70 * 1024 * 1024)
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "hello.txt", "pad": big}},
            }
        )
        answer = await client.answer(2)
        assert "result" in answer, answer  # a refusal of the unknown argument, not a parse error
        assert answer["result"]["isError"] is True
    finally:
        await client.close()


def test_the_cache_file_is_looked_for_in_the_state_folder() -> None:
    from lsp_server.home.dirs import Dirs

    cache = front.ListingCache.of("2025-11-25", "full")
    assert cache.path.parent == Dirs.from_environment().state


async def test_the_loop_takes_the_gil_back_sooner_while_the_imports_run() -> None:
    """While the runtime and the SDK are imported in threads, the GIL's switch interval is
    short, so a call that arrives meanwhile waits 0.5 ms, not 5, each time the loop wakes
    (docs/BENCHMARKS.md: a read sent 0.9-1 s after the start); then it is as it was."""
    seen: list[float] = []

    class Imports:
        async def warm(self) -> None:
            seen.append(sys.getswitchinterval())

        def warm_up(self, busy: object) -> None:
            seen.append(sys.getswitchinterval())

        async def loaded(self) -> None:
            await asyncio.sleep(0)
            seen.append(sys.getswitchinterval())

    before = sys.getswitchinterval()
    imports = Imports()
    await front._warm(imports, imports, front._never)  # type: ignore[arg-type]
    assert seen == [front.WARMING_SWITCH_INTERVAL] * 3
    assert sys.getswitchinterval() == before > front.WARMING_SWITCH_INTERVAL


def test_the_listing_cache_is_found_without_attrs(tmp_path: Path) -> None:
    """The front answers a plain tools/list from the cache on the loop while the runtime is
    imported in a thread: finding the cache imports nothing heavy (attrs took ~15 ms there)."""
    code = (
        "import sys\n"
        "from lsp_server.mcp.listing_cache import ListingCache\n"
        "ListingCache.of('2025-11-25', 'core').load()\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(tmp_path / "state")}
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    heavy = ("attr", "attrs", "cattrs", "pydantic", "mcp", "anyio")
    assert [m for m in loaded if m.split(".")[0] in heavy] == []
