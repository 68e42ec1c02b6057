"""Hypothesis fuzzing of toolhost/call over real LSP: the server never dies, every answer is
a result with an error code or a success."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_server.tools.registry import build_registry
from tests.helpers import lsp_call, lsp_session
from tests.schema_strategies import from_schema

ISSUE_TOOLS = [
    t
    for t in build_registry().all_tools()
    if t.name
    in {
        "read_file",
        "write_file",
        "edit_file",
        "multi_edit",
        "delete_range",
        "move_file",
        "read",
        "write",
        "edit",
    }
]


class ServerBox:
    """A toolhost server and its client on an event loop in a thread, for sync hypothesis tests."""

    def __init__(self, root: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.root = root
        self._context: Any = None
        self.client: Any = None

    def run(self, coro: Any, timeout: float = 60) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout)

    def start(self) -> None:
        self._context = lsp_session(self.root, {"policy": {"mode": "bypass"}})
        self.client = self.run(self._context.__aenter__())

    def stop(self) -> None:
        self.run(self._context.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerBox]:
    root = tmp_path_factory.mktemp("fuzz") / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\nbeta\n")
    box = ServerBox(root)
    box.start()
    yield box
    box.stop()


def _check_answer(result: dict[str, Any]) -> None:
    assert isinstance(result["isError"], bool)
    if result["isError"]:
        assert result["error"]["code"]
        assert result["error"]["code"] != "internal_error", result["error"]["message"]
    assert result["content"] and result["content"][0]["type"] == "text"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)


@pytest.mark.slow
@FUZZ
@given(name=st.sampled_from([t.name for t in ISSUE_TOOLS] + ["nope", ""]), arguments=json_values)
def test_random_arguments_never_crash(server: ServerBox, name: str, arguments: Any) -> None:
    result = server.run(lsp_call(server.client, name, arguments))
    _check_answer(result)


@FUZZ
@given(data=st.data())
def test_schema_derived_arguments_never_crash(server: ServerBox, data: st.DataObject) -> None:
    tool = data.draw(st.sampled_from(ISSUE_TOOLS))
    arguments = data.draw(from_schema(tool.contract.public()["inputSchema"]))
    surface = "minimal" if tool.contract.minimal else "full"
    result = server.run(lsp_call(server.client, tool.name, arguments, surface=surface))
    _check_answer(result)


def test_malformed_envelopes_get_errors_and_the_server_survives(server: ServerBox) -> None:
    async def send_raw(params: Any) -> str:
        try:
            await server.client.protocol.send_request_async("toolhost/call", params)
        except Exception as exc:  # a JSON-RPC error for a malformed envelope is the contract
            return type(exc).__name__
        return "answered"

    for params in (
        [1, 2],
        "text",
        5,
        {"name": 7},
        {"arguments": {}},
        {"name": "x", "session": []},
        {"name": "read_file", "arguments": {"path": "a.txt"}, "workDoneToken": {}},
        {"name": "read_file", "arguments": {"path": "a.txt"}, "preApproved": "yes"},
        {"name": "read_file", "arguments": {"path": "a.txt"}, "surface": "everything"},
    ):
        # protocol.md: JSON-RPC errors are for a malformed envelope, and only for that.
        outcome = server.run(send_raw(params))
        assert outcome == "JsonRpcInvalidParams", (params, outcome)
    unknown = server.run(send_raw_method(server, "toolhost/doesNotExist"))
    assert unknown == "JsonRpcMethodNotFound"
    alive = server.run(lsp_call(server.client, "read_file", {"path": "a.txt"}))
    assert not alive["isError"] and "alpha" in json.dumps(alive)


async def send_raw_method(server: ServerBox, method: str) -> str:
    try:
        await server.client.protocol.send_request_async(method, {})
    except Exception as exc:
        return type(exc).__name__
    return "answered"
