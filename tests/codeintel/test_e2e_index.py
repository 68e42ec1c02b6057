"""The index through a real `toolhost serve`: dynamic registration of file watchers,
didChangeWatchedFiles, and a restart that re-parses nothing."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.helpers import lsp_call, lsp_session, make_test_client, text_of

pytestmark = pytest.mark.slow

WATCHING_CLIENT = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True
        )
    )
)


def recording_client() -> LanguageClient:
    client = make_test_client()
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(params: Any) -> None:
        client.registrations.append(params)  # type: ignore[attr-defined]

    return client


def progress_client() -> LanguageClient:
    client = make_test_client()
    client.progress_values = {}  # type: ignore[attr-defined]

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def _create(params: Any) -> None:
        client.progress_values[params.token] = []  # type: ignore[attr-defined]

    @client.feature(types.PROGRESS)
    def _progress(params: Any) -> None:
        value = params.value
        kind = value["kind"] if isinstance(value, dict) else value.kind
        client.progress_values[params.token].append(kind)  # type: ignore[attr-defined]

    return client


async def index_status(client: LanguageClient) -> dict[str, Any]:
    status = await client.protocol.send_request_async("toolhost/status", {})
    roots: list[dict[str, Any]] = status["index"]["roots"]
    assert len(roots) == 1
    return roots[0]


async def wait_for_complete_index(client: LanguageClient) -> dict[str, Any]:
    """Poll toolhost/status until the background build is done (bounded)."""
    for _ in range(600):
        root = await index_status(client)
        if root["complete"] and not root["building"]:
            return root
        await asyncio.sleep(0.05)
    raise AssertionError("the index build did not finish")


async def search(client: LanguageClient, query: str) -> str:
    return text_of(await lsp_call(client, "code_index", {"action": "search", "query": query}))


async def test_watched_file_changes_reach_the_index(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    source = root / "a.py"
    source.write_text("def alpha(): pass\n", encoding="utf-8")
    async with lsp_session(
        root, client_factory=recording_client, capabilities=WATCHING_CLIENT
    ) as client:
        assert "a.py:1: function alpha" in await search(client, "alpha")
        await wait_for_complete_index(client)
        registrations = client.registrations  # type: ignore[attr-defined]
        methods = [r.method for p in registrations for r in p.registrations]
        assert methods == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES]

        # Same size, same mtime: invisible to the stat sweep, only the event tells.
        stat = source.stat()
        source.write_text("def gamma(): pass\n", encoding="utf-8")
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert "no definition matches" in await search(client, "gamma")
        client.protocol.notify(
            types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=source.as_uri(), type=types.FileChangeType.Changed)]
            ),
        )
        assert "a.py:1: function gamma" in await search(client, "gamma")
        assert "no definition matches" in await search(client, "alpha")


async def test_restart_reuses_the_index(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    for n in range(5):
        (root / "pkg" / f"m{n}.go").write_text(
            f"package pkg\n\nfunc Handler{n}() {{}}\n", encoding="utf-8"
        )
    state = tmp_path / "state"
    async with lsp_session(root, state_dir=state) as client:
        await search(client, "Handler3")
        first = await wait_for_complete_index(client)
        # The cold search and the background build may both parse m3.go when they overlap.
        assert first["parsedThisRun"] in (5, 6)
    async with lsp_session(root, state_dir=state) as client:
        assert "pkg/m3.go:3: function Handler3" in await search(client, "Handler3")
        again = await index_status(client)
        assert again["complete"] and again["parsedThisRun"] == 0


async def test_background_build_reports_work_done_progress(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.rs").write_text("fn alpha() {}\n", encoding="utf-8")
    capabilities = types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True)
    )
    async with lsp_session(
        root, capabilities=capabilities, client_factory=progress_client
    ) as client:
        assert "a.rs:1: function alpha" in await search(client, "alpha")
        await wait_for_complete_index(client)
        values: dict[str, list[str]] = client.progress_values  # type: ignore[attr-defined]
        for _ in range(200):  # the end notification may trail the status
            if values and next(iter(values.values()))[-1:] == ["end"]:
                break
            await asyncio.sleep(0.05)
        kinds = [v for token, v in values.items() if token.startswith("toolhost-index-")]
        assert len(kinds) == 1
        assert kinds[0][0] == "begin" and kinds[0][-1] == "end"
