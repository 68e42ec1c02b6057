"""Lazy start-up: the initialize answer needs neither the runtime nor (once the capability is
cached) the tool modules; what it answers is the same either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_server.server import capability_cache
from tests.helpers import lsp_session

ROOT = Path(__file__).resolve().parents[2]
# What `toolhost serve` must not have loaded when it answers initialize.
HEAVY = (
    "jsonschema",
    "tree_sitter",
    "PIL",
    "httpx",
    "nbformat",
    "lsp_server.runtime.dispatch",
    "lsp_server.policy.engine",
    "lsp_server.langservers.manager",
    "lsp_server.compose",
)
PROBE = """
import json, sys
from lsprotocol import types
from lsp_server.cli import main  # what `toolhost serve` imports before it reads a message
from lsp_server.server import transport
from lsp_server.server.handlers import create_server
server = create_server()
params = types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=None)
server.setup(params)
capability = server.advertised()
loaded = sorted(m for m in sys.modules if m.startswith(tuple(json.loads(sys.argv[1]))))
print(json.dumps({"capability": capability, "loaded": loaded,
                  "tools": "lsp_server.tools.registry" in sys.modules}))
"""


# The same server driven through its protocol: what was loaded when the initialize answer
# reached the writer, and what the warm-up (started after that) loaded before any call.
ANSWER_PROBE = """
import asyncio, json, sys
from lsp_server.server.handlers import create_server
heavy = tuple(json.loads(sys.argv[1]))
server = create_server()
answers = []
class Writer:
    def write(self, data):
        loaded = sorted(m for m in sys.modules if m.startswith(heavy))
        answers.append({"loaded": loaded, "warming": server.warm_up.started, "data": data.decode()})
    def close(self):
        pass
async def main():
    server.protocol.set_writer(Writer())
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": None, "rootUri": None, "capabilities": {}}}
    server.protocol.handle_message(server.protocol.structure_message(message))
    for _ in range(10_000):  # a few loop turns: the answer, then the warm-up's start
        if server.warm_up.started:
            break
        await asyncio.sleep(0)
    await server.warm_up.wait()
asyncio.run(main())
print(json.dumps({"answers": answers, "warmed": "lsp_server.compose" in sys.modules,
                  "registry": sys.modules["lsp_server.tools.registry"]
                              .build_registry.cache_info().currsize == 1,
                  "runtime": server.runtime is not None}))
"""


@pytest.mark.slow
def test_the_warm_up_starts_once_the_initialize_answer_is_written(tmp_path: Path) -> None:
    """The runtime's modules load in a thread that starts after the answer has reached the
    writer, with no `initialized` and no call: a first call finds them loaded."""
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(tmp_path / "state")}
    for _ in range(2):  # a cold capability cache, then a warm one
        done = subprocess.run(
            [sys.executable, "-c", ANSWER_PROBE, json.dumps(HEAVY)],
            capture_output=True, text=True, env=env, cwd=ROOT, check=True, timeout=120,
        )  # fmt: skip
        seen = json.loads(done.stdout)
        first = seen["answers"][0]
        assert '"id": 1' in first["data"] and '"toolhost"' in first["data"]
        assert first["loaded"] == []
        assert first["warming"] is False
        assert seen["warmed"] is True and seen["registry"] is True
        assert seen["runtime"] is False  # built at `initialized` (or by a first request)


def probe(state: Path) -> dict[str, object]:
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(state)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(HEAVY)],
        capture_output=True, text=True, env=env, cwd=ROOT, check=True, timeout=120,
    )  # fmt: skip
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_initialize_loads_no_engine_and_no_runtime(tmp_path: Path) -> None:
    cold = probe(tmp_path / "state")
    assert cold["loaded"] == []
    assert cold["tools"] is True  # the first start computes the capability from the tools
    warm = probe(tmp_path / "state")
    assert warm["loaded"] == []
    assert warm["tools"] is False  # later starts answer before importing a tool
    assert warm["capability"] == cold["capability"]


def test_a_cache_for_other_sources_is_not_used(tmp_path: Path) -> None:
    state = tmp_path / "state"
    right = probe(state)["capability"]
    assert isinstance(right, dict)
    capability_cache.store(state, "another-key", {**right, "fullHash": "stale"})
    assert probe(state)["capability"] == right


def test_two_versions_sharing_a_state_folder_both_answer_from_the_cache(
    tmp_path: Path,
) -> None:
    """Another version's start stores its own key beside this one's: this version's next
    start still answers without importing a tool (one entry per folder made each of them
    build the registry before every answer)."""
    state = tmp_path / "state"
    probe(state)
    capability_cache.store(state, "another-version", {"fullHash": "theirs"})
    warm = probe(state)
    assert warm["tools"] is False
    assert capability_cache.load(state, "another-version") == {"fullHash": "theirs"}


@pytest.mark.slow
async def test_the_answer_is_the_same_on_a_cold_and_a_warm_start(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    answers = []
    for _ in range(2):
        async with lsp_session(root, state_dir=tmp_path / "state") as client:
            init: types.InitializeResult = client.init_result  # type: ignore[attr-defined]
            answers.append(init.capabilities.experimental["toolhost"])  # type: ignore[index]
            tools = await client.protocol.send_request_async("toolhost/tools", {})
            assert tools["surfaceHash"] == answers[-1]["surfaceHash"]
    assert answers[0] == answers[1]
