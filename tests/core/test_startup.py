"""Lazy start-up: the initialize answer needs neither the runtime nor (once the capability is
cached) the tool modules; what it answers is the same either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
