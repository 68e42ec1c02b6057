"""use_capability, surfaces and the storm breaker, through the real runtime."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from pathlib import Path
from typing import Any

import attrs
import pytest

from lsp_server.core.contract import Registry
from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.storm import StormBreaker, convergence_sentence
from lsp_server.tools.registry import all_tools, build_registry
from lsp_server.tools.session.use_capability import COMPRESS_EXPLANATION
from tests.helpers import (
    call_tool,
    lsp_call,
    lsp_session,
    make_runtime,
    make_test_client,
    text_of,
)
from tests.notebook.test_notebook_engine import FIXTURE

Call = tuple[str, dict[str, Any]]


def make_workspace(base: Path) -> Path:
    root = base / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "notes.md").write_text("# Notes\nfirst\nsecond\nthird\n")
    (root / "a.txt").write_text("alpha\n")
    shutil.copyfile(FIXTURE, root / "analysis.ipynb")
    return root


def via_capability(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"action": "call", "id": f"tool:{name}", "arguments": arguments}


def outcome(result: Any, root: Path) -> tuple[bool, str | None, str]:
    text = text_of(result).replace(str(root), "<root>")
    return result.is_error, result.error.code if result.error else None, text


# Per optional tool: calls to make first (directly, in both runtimes), then the target call.
SCENARIOS: dict[str, tuple[list[Call], dict[str, Any]]] = {
    "delete_range": (
        [("read_file", {"path": "docs/notes.md"})],
        {"path": "docs/notes.md", "start_anchor": "first", "end_anchor": "second"},
    ),
    "move_file": (
        [("read_file", {"path": "a.txt"})],
        {"source_path": "a.txt", "destination_path": "docs/b.txt"},
    ),
    "notebook_edit": (
        [("read_file", {"path": "analysis.ipynb"})],
        {"path": "analysis.ipynb", "cell_number": 1, "new_source": "import os"},
    ),
    "multi_edit": (
        [("read_file", {"path": "docs/notes.md"})],
        {"path": "docs/notes.md", "edits": [{"old_string": "third", "new_string": "3rd"}]},
    ),
    "todo_write": ([], {"todos": [{"content": "ship", "status": "pending"}]}),
    "create_goal": ([], {"objective": "ship it", "max_rounds": 3}),
    "get_goal": ([("create_goal", {"objective": "ship it"})], {}),
    "update_goal": (
        [("create_goal", {"objective": "ship it"})],
        {"goal_id": "goal-1", "revision": 1, "action": "blocked", "blocked_reason": "red CI"},
    ),
    "present": ([], {"files": [{"path": "docs/notes.md", "description": "notes"}]}),
    "job_input": (
        [("bash", {"command": 'read -p "Name: " n; echo "hi $n"'})],
        {"job_id": "bash-1", "text": "Ada\n"},
    ),
}


def minimal_instance(schema: dict[str, Any]) -> Any:
    """Smallest value the schema accepts, for tools without a scenario (added later)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: minimal_instance(props[name]) for name in schema.get("required", [])}
    if kind == "array":
        return [minimal_instance(schema.get("items", {}))] * schema.get("minItems", 0)
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return "x" * max(1, schema.get("minLength", 1))


# The provider-visible default surface, as the contract entries mark it (`core=True`).
CORE_TOOLS = (
    "bash",
    "edit_file",
    "job_kill",
    "job_output",
    "read_file",
    "use_capability",
    "view_image",
    "write_file",
)


def test_core_tools_are_the_entries_marked_core() -> None:
    assert build_registry().core_names == CORE_TOOLS


def optional_tools() -> list[str]:
    registry = build_registry()
    core = set(registry.core_names)
    return [t.name for t in registry.surface("full") if t.name not in core]


def test_the_core_surface_hash_ignores_optional_tools() -> None:
    tools = all_tools()
    only_core = Registry([t for t in tools if t.contract.core])
    everything = Registry(tools)
    assert only_core.hash("core") == everything.hash("core")
    assert only_core.hash("full") != everything.hash("full")
    assert "compress" not in everything.names("full")
    assert set(optional_tools()) >= {"web_fetch", "notebook_edit", "present", "todo_write"}


@pytest.mark.parametrize("name", optional_tools())
async def test_every_optional_tool_gives_the_same_result_through_use_capability(
    name: str, tmp_path: Path, fence: Any, site: str
) -> None:
    settings = {"web": {"allowLoopback": True}}
    direct_root = make_workspace(tmp_path / "direct")
    proxied_root = make_workspace(tmp_path / "proxied")
    direct = make_runtime(direct_root, settings)
    proxied = make_runtime(proxied_root, settings)
    if name == "web_fetch":
        setup, arguments = [], {"url": f"{site}/page.html"}
    else:
        tool = direct.registry.get(name)
        assert tool is not None
        setup, arguments = SCENARIOS.get(name, ([], minimal_instance(dict(tool.contract.schema))))
    for runtime in (direct, proxied):
        for setup_name, setup_args in setup:
            assert not (await call_tool(runtime, setup_name, setup_args)).is_error
    plain = await call_tool(direct, name, arguments)
    through = await call_tool(proxied, "use_capability", via_capability(name, arguments))
    assert outcome(through, proxied_root) == outcome(plain, direct_root)
    assert through.meta.paths == [
        p.replace(str(direct_root), str(proxied_root)) for p in plain.meta.paths
    ]
    if name in SCENARIOS or name == "web_fetch":
        assert not plain.is_error, text_of(plain)
    # The files the two calls left behind are the same too.
    for path in sorted(direct_root.rglob("*")):
        twin = proxied_root / path.relative_to(direct_root)
        assert twin.exists() and (path.is_dir() or path.read_bytes() == twin.read_bytes())


async def test_wrong_inner_arguments_name_arguments_and_the_fingerprint(tmp_path: Path) -> None:
    runtime = make_runtime(make_workspace(tmp_path))
    target = runtime.registry.get("notebook_edit")
    assert target is not None
    fp16 = target.contract.fingerprint[:16]
    bad = {"path": "analysis.ipynb", "cell_number": "two"}
    result = await call_tool(runtime, "use_capability", via_capability("notebook_edit", bad))
    assert result.is_error and result.error is not None
    assert result.error.code == "schema_mismatch"
    text = text_of(result)
    assert "NOT executed" in text
    # A wrong value is not a misplaced parameter: no reminder of where parameters go.
    assert "inside `arguments`" not in text
    assert f"fingerprint {fp16}" in text
    assert result.error.signature == f"argument_validation:notebook_edit:{fp16}:type"
    assert result.error.violations == [
        {"path": "/cell_number", "keyword": "type", "expected": "type integer"}
    ]
    missing = await call_tool(
        runtime, "use_capability", via_capability("notebook_edit", {"cell_number": 2})
    )
    assert missing.error is not None and missing.error.code == "schema_mismatch"
    assert "use_capability passes notebook_edit's parameters inside `arguments`" in text_of(missing)
    # The same arguments put at the root of use_capability are refused by its own schema.
    root_level = await call_tool(runtime, "use_capability", {"action": "call", **bad})
    assert root_level.error is not None and root_level.error.code == "schema_mismatch"
    assert "use_capability takes its parameters at the root" in text_of(root_level)


async def test_the_target_read_only_flag_decides_approval(tmp_path: Path) -> None:
    runtime = make_runtime(make_workspace(tmp_path), mode="default")  # nobody to ask: deny
    await call_tool(runtime, "read_file", {"path": "a.txt"})
    writer = await call_tool(
        runtime,
        "use_capability",
        via_capability("move_file", {"source_path": "a.txt", "destination_path": "b.txt"}),
    )
    assert writer.error is not None and writer.error.code == "permission.unattended"
    assert "move_file was not allowed" in text_of(writer)
    assert (runtime.workspace.roots[0] / "a.txt").exists()
    reader = await call_tool(runtime, "use_capability", via_capability("get_goal", {}))
    assert not reader.is_error


async def test_list_search_inspect_and_decline(tmp_path: Path) -> None:
    runtime = make_runtime(make_workspace(tmp_path))
    listed = text_of(await call_tool(runtime, "use_capability", {"action": "list"}))
    assert "tool:web_fetch (read-only): Fetch a public http(s) URL" in listed
    assert "tool:notebook_edit (writes files):" in listed
    assert "session:tool_result (read-only):" in listed
    assert "tool:use_capability" not in listed
    found = await call_tool(
        runtime, "use_capability", {"action": "search", "query": "fetch web pages"}
    )
    assert text_of(found).splitlines()[0].startswith("tool:web_fetch")
    goal = await call_tool(runtime, "use_capability", {"action": "search", "query": "goal"})
    assert {line.split(" ")[0] for line in text_of(goal).splitlines()[:3]} == {
        "tool:create_goal",
        "tool:get_goal",
        "tool:update_goal",
    }
    inspected = text_of(
        await call_tool(runtime, "use_capability", {"action": "inspect", "id": "tool:web_fetch"})
    )
    entry = runtime.registry.get("web_fetch")
    assert entry is not None
    assert f"fingerprint: {entry.contract.fingerprint[:16]}" in inspected
    assert inspected.endswith(entry.contract.canonical_schema.rstrip("\n"))
    declined = await call_tool(
        runtime,
        "use_capability",
        {"action": "decline", "id": "tool:web_fetch", "reason": "offline task"},
    )
    assert text_of(declined) == "noted: not using tool:web_fetch (offline task)"
    status = runtime.sessions.get("default").status()
    assert [(d["id"], d["reason"]) for d in status["declinedCapabilities"]] == [
        ("tool:web_fetch", "offline task")
    ]
    missing_id = await call_tool(runtime, "use_capability", {"action": "inspect"})
    assert missing_id.error is not None and missing_id.error.code == "invalid_argument"
    unknown = await call_tool(
        runtime, "use_capability", {"action": "inspect", "id": "tool:web_fetc"}
    )
    assert unknown.error is not None and "tool:web_fetch" in text_of(unknown)


async def test_compress_is_not_registered_and_use_capability_says_why(tmp_path: Path) -> None:
    runtime = make_runtime(make_workspace(tmp_path))
    assert runtime.registry.get("compress") is None
    for args in (
        {"action": "call", "id": "tool:compress", "arguments": {}},
        {"action": "inspect", "id": "compress"},
    ):
        result = await call_tool(runtime, "use_capability", args)
        assert result.error is not None and COMPRESS_EXPLANATION in text_of(result)
    searched = await call_tool(runtime, "use_capability", {"action": "search", "query": "compress"})
    assert COMPRESS_EXPLANATION in text_of(searched)


async def test_session_tool_result_pages_like_toolhost_result(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    (root / "big.txt").write_text("".join(f"line {i:05d} " + "é" * 60 + "\n" for i in range(1500)))
    runtime = make_runtime(root)
    big = await call_tool(runtime, "read_file", {"path": "big.txt"})
    ref = big.meta.result_ref
    assert big.meta.truncated and ref is not None
    pieces: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = await call_tool(
            runtime,
            "use_capability",
            {
                "action": "call",
                "id": "session:tool_result",
                "arguments": {"result_ref": ref, "offset": offset},
            },
        )
        header, _, body = text_of(page).partition("\n")
        expected = runtime.sessions.get("default").results.page(ref, offset)
        assert body == expected.text
        assert f"sha256 {expected.sha256}" in header
        pieces.append(body)
        offset = expected.next_offset
    full = "".join(pieces).encode()
    assert hashlib.sha256(full).hexdigest() == expected.sha256
    assert "complete]" in header
    bad = await call_tool(
        runtime,
        "use_capability",
        {"action": "call", "id": "session:tool_result", "arguments": {"ref": ref}},
    )
    assert bad.error is not None and '(did you mean "result_ref"?)' in text_of(bad)


def test_storm_breaker_streaks() -> None:
    storm = StormBreaker()
    sig = "argument_validation:read_file:0123456789abcdef:required"
    assert storm.record("b1", sig) is None
    assert storm.record("b1", sig) is None  # same batch: still one batch
    assert storm.record("b2", sig) is None
    assert storm.record("b3", sig) == convergence_sentence(sig)
    assert storm.record("b3", sig) is None  # once
    assert storm.record("b4", sig) is None  # once per streak
    assert storm.record("b5", None) is None  # a success resets
    assert storm.record("b6", sig) is None
    assert storm.record("b7", sig) is None
    assert storm.record("b8", sig) == convergence_sentence(sig)
    other = "FS_NOT_FOUND:read_file:abc"
    assert storm.record("b9", other) is None  # a different failure starts a new streak
    assert storm.record("b10", sig) is None


async def test_three_identical_failing_batches_get_the_convergence_sentence_once(
    tmp_path: Path,
) -> None:
    runtime = make_runtime(make_workspace(tmp_path))
    bad = via_capability("notebook_edit", {"path": "analysis.ipynb", "cell_number": "two"})

    async def batch(batch_id: str, arguments: dict[str, Any] = bad) -> list[str]:
        texts = []
        for _ in range(2):  # two calls in the batch: still one batch
            result = await call_tool(runtime, "use_capability", arguments, batch=batch_id)
            texts.append(text_of(result))
        return texts

    sentence = "stop repeating the identical call"
    assert not any(sentence in t for t in await batch("b1") + await batch("b2"))
    third = await batch("b3")
    assert sentence in third[0] and sentence not in third[1]
    assert not any(sentence in t for t in await batch("b4"))
    # A success resets the streak; three more identical failures warn again.
    ok = await call_tool(runtime, "get_goal", {})
    assert not ok.is_error
    for batch_id in ("b5", "b6"):
        assert not any(sentence in t for t in await batch(batch_id))
    again = await call_tool(runtime, "use_capability", bad)  # no batch id: its own batch
    assert sentence in text_of(again)
    assert again.error is not None and again.error.details["convergence"].startswith("Convergence")


def client_seeing_present() -> Any:
    client = make_test_client()
    client.presented = asyncio.Queue()

    @client.feature("toolhost/present")
    def _present(params: Any) -> None:
        client.presented.put_nowait(params)

    return client


async def test_status_present_and_core_hash_over_the_protocol(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    async with lsp_session(root, client_factory=client_seeing_present) as client:
        before = await client.protocol.send_request_async("toolhost/tools", {})
        full = await client.protocol.send_request_async("toolhost/tools", {"surface": "full"})
        await lsp_call(client, "todo_write", {"todos": [{"content": "a", "status": "pending"}]})
        await lsp_call(
            client, "use_capability", via_capability("create_goal", {"objective": "ship"})
        )
        await lsp_call(client, "present", {"files": [{"path": "a.txt", "description": "A"}]})
        presented = await asyncio.wait_for(client.presented.get(), 30)
        after = await client.protocol.send_request_async("toolhost/tools", {})
        status = await client.protocol.send_request_async("toolhost/status", {})
    assert before["surfaceHash"] == after["surfaceHash"]
    assert before["tools"] == after["tools"]
    assert [t["name"] for t in before["tools"]] == sorted(
        n for n in CORE_TOOLS if n in {t["name"] for t in full["tools"]}
    )
    assert before["surfaceHash"] != full["surfaceHash"]
    session = next(s for s in status["sessions"] if s["id"] == "default")
    assert session["goal"]["objective"] == "ship"
    assert session["todos"]["counts"]["pending"] == 1
    assert session["presented"]["files"][0]["path"] == "a.txt"
    assert_plain_json(session)  # dicts, lists and scalars all the way, no namedtuples
    assert presented == {
        "session": "default",
        "files": [{"path": "a.txt", "uri": (root / "a.txt").as_uri(), "description": "A"}],
    }


def test_nested_calls_reach_the_runtime_through_the_context_not_services(
    tmp_path: Path,
) -> None:
    runtime = make_runtime(tmp_path)
    with pytest.raises(LookupError):
        runtime.services.get(Runtime)
    assert attrs.has(StormBreaker)


async def test_direct_failures_and_unknown_tools_count_too(tmp_path: Path) -> None:
    runtime = make_runtime(make_workspace(tmp_path))
    sentence = "Convergence:"
    missing = {"path": "nope.txt"}
    texts = [text_of(await call_tool(runtime, "read_file", missing)) for _ in range(3)]
    assert [sentence in t for t in texts] == [False, False, True]
    assert "FS_NOT_FOUND:read_file:" in texts[2]
    # Different arguments are a different failure: a new streak.
    assert sentence not in text_of(await call_tool(runtime, "read_file", {"path": "other.txt"}))
    texts = [text_of(await call_tool(runtime, "read_fil", {})) for _ in range(3)]
    assert [sentence in t for t in texts] == [False, False, True]
    assert "unknown_tool:read_fil" in texts[2]


def assert_plain_json(value: object, where: str = "$") -> None:
    """What a JSON parser gives: dict with str keys, list, str, int, float, bool, None (a
    namedtuple from pygls's default converter would also pass json.dumps, as a list)."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert type(key) is str, f"{where}: key {key!r}"
            assert_plain_json(item, f"{where}.{key}")
    elif isinstance(value, list):
        assert type(value) is list, f"{where}: {type(value).__name__}"
        for index, item in enumerate(value):
            assert_plain_json(item, f"{where}[{index}]")
    else:
        assert type(value) in (str, int, float, bool, type(None)), (
            f"{where}: {type(value).__name__}"
        )
