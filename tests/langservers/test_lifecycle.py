"""Server lifecycle with real servers: restart after a kill, lsp.crashed for a server that
dies at every start, re-sync after edit_file, answers during indexing, no orphans."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
from pathlib import Path

import pytest

from lsp_server.langservers.jsonrpc import JsonRpcProcess
from lsp_server.langservers.manager import LanguageServerManager
from lsp_server.runtime.dispatch import Runtime
from tests.helpers import SERVER_COMMAND, call_tool, lsp_call, lsp_session, text_of
from tests.langservers.conftest import (
    copy_fixture,
    lsp_runtime,
    require_server,
    rows_of,
    stop_servers,
)

pytestmark = pytest.mark.langserver

DEFINITION = {"path": "main.py", "line": 8, "symbol": "make_circle"}
EXPECTED = "shapes.py:15: def make_circle(radius: float) -> Circle:"


def manager_of(runtime: Runtime) -> LanguageServerManager:
    return runtime.services.get(LanguageServerManager)


def process_group_members(pgid: int) -> list[int]:
    """Live processes (not zombies) whose process group is `pgid`."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, group = fields[0], int(fields[2])
        if group == pgid and state != "Z":
            members.append(int(entry.name))
    return members


@pytest.mark.parametrize("project", ["python"], indirect=True)
async def test_killed_server_is_restarted_on_the_next_call(project: Runtime) -> None:
    first = await call_tool(project, "lsp_definition", DEFINITION)
    assert rows_of(first) == EXPECTED
    (client,) = manager_of(project).clients()
    old_pid = client.process.pid
    assert old_pid is not None
    os.killpg(old_pid, signal.SIGKILL)
    await client.process.exited.wait()
    again = await call_tool(project, "lsp_definition", DEFINITION)
    assert not again.is_error, text_of(again)
    assert rows_of(again) == EXPECTED
    (restarted,) = manager_of(project).clients()
    assert restarted.process.pid != old_pid


async def test_server_crashing_at_every_start_gives_lsp_crashed_with_stderr(
    tmp_path: Path,
) -> None:
    root = copy_fixture("python", tmp_path)
    # A FAKE server (named as such): it writes a last word to stderr and exits at start.
    fake = tmp_path / "fake-crashing-language-server"
    fake.write_text(
        "#!/bin/sh\necho 'fake crashing server: cannot load the project (on purpose)' >&2\nexit 3\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    runtime = lsp_runtime(
        root, {"lsp": {"servers": {"python": [str(fake)]}, "restartBackoffSeconds": 0.05}}
    )
    try:
        result = await call_tool(runtime, "lsp_definition", DEFINITION)
        assert result.is_error
        assert result.error is not None and result.error.code == "lsp.crashed"
        assert "cannot load the project (on purpose)" in text_of(result)
        assert "exit status 3" in text_of(result)
        # The next call fails fast with the same diagnosis instead of respawning forever.
        again = await call_tool(runtime, "lsp_definition", DEFINITION)
        assert again.error is not None and again.error.code == "lsp.crashed"
    finally:
        await stop_servers(runtime)


@pytest.mark.parametrize("project", ["python"], indirect=True)
async def test_edit_file_is_resynced_to_the_server(project: Runtime) -> None:
    before = await call_tool(project, "lsp_diagnostics", {"path": "bad_types.py"})
    assert text_of(before).startswith("1 diagnostic(s) in bad_types.py:"), text_of(before)
    await call_tool(project, "read_file", {"path": "bad_types.py"})
    edited = await call_tool(
        project,
        "edit_file",
        {"path": "bad_types.py", "old_string": '"forty-two"', "new_string": "42"},
    )
    assert not edited.is_error, text_of(edited)
    after = await call_tool(project, "lsp_diagnostics", {"path": "bad_types.py"})
    assert rows_of(after) == "0 diagnostic(s) in bad_types.py."
    (client,) = manager_of(project).clients()
    (document,) = [d for d in client.documents.values() if d.uri.endswith("bad_types.py")]
    assert document.version == 2


def write_large_python_project(root: Path, modules: int = 400) -> None:
    root.mkdir()
    (root / "core.py").write_text("def shared_helper(value: int) -> int:\n    return value + 1\n")
    for number in range(modules):
        (root / f"module_{number:03}.py").write_text(
            "from core import shared_helper\n\n\n"
            + "".join(
                f"def function_{number}_{k}(x: int) -> int:\n"
                f"    return shared_helper(x) * {k}\n\n\n"
                for k in range(20)
            )
        )


async def test_request_while_indexing_is_lsp_not_ready_then_the_full_answer(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "large").resolve()
    write_large_python_project(root)
    require_server("python", root)
    # No wait for readiness: the first call reaches pyright before it has listed the 401
    # files (it lists them only after our answer to its workspace/configuration request),
    # so the server is really indexing and the honest answer is lsp.not_ready.
    runtime = lsp_runtime(root, {"lsp": {"readyTimeoutSeconds": 0}})
    try:
        arguments = {"path": "module_000.py", "line": 5, "symbol": "shared_helper"}
        refused = await call_tool(runtime, "lsp_references", arguments)
        assert refused.error is not None and refused.error.code == "lsp.not_ready"
        assert text_of(refused) == (
            "lsp.not_ready: the language server (pyright-langserver) is still indexing "
            "(background analysis); retry in a few seconds"
        )
        (client,) = manager_of(runtime).clients()
        assert client.busy == ["background analysis"]
        assert await client.wait_until_idle(120)
        references = await call_tool(runtime, "lsp_references", arguments)
        rows = rows_of(references).splitlines()
        # 400 modules x (1 import + 20 calls) + the definition = 8401 rows, capped at 200.
        assert rows[-1] == "(8201 more not shown; pass a larger limit)", rows[-3:]
        assert len(rows) == 201
        definition = await call_tool(runtime, "lsp_definition", arguments)
        assert rows_of(definition) == "core.py:1: def shared_helper(value: int) -> int:"
    finally:
        await stop_servers(runtime)


SHUTDOWN_CASES = {
    "python": (DEFINITION, EXPECTED),
    # typescript-language-server runs tsserver (and its typings installer) as children.
    "typescript": (
        {"path": "src/main.ts", "line": 7, "symbol": "makeCircle"},
        "src/shapes.ts:11: export function makeCircle(radius: number): Circle {",
    ),
}


@pytest.mark.parametrize("language", sorted(SHUTDOWN_CASES))
async def test_no_language_server_survives_toolhost_shutdown(tmp_path: Path, language: str) -> None:
    root = copy_fixture(language, tmp_path)
    require_server(language, root)
    arguments, expected = SHUTDOWN_CASES[language]
    async with lsp_session(root) as client:
        result = await lsp_call(client, "lsp_definition", arguments)
        assert rows_of(result) == expected
        status = await client.protocol.send_request_async("toolhost/status", {})
        (server,) = status["languageServers"]
        pgid = server["pid"]
        assert len(process_group_members(pgid)) >= 2  # the server and its own children
    # shutdown + exit happened when the session closed; the group must be empty.
    for _ in range(50):
        if not process_group_members(pgid):
            break
        await asyncio.sleep(0.1)
    assert process_group_members(pgid) == []


async def test_idle_documents_are_closed_and_idle_servers_stopped(tmp_path: Path) -> None:
    root = copy_fixture("python", tmp_path)
    require_server("python", root)
    runtime = lsp_runtime(root, {"lsp": {"documentIdleSeconds": 1.0, "idleSeconds": 4.0}})
    try:
        result = await call_tool(runtime, "lsp_definition", DEFINITION)
        assert rows_of(result) == EXPECTED
        manager = manager_of(runtime)
        (client,) = manager.clients()
        pgid = client.process.pid
        assert pgid is not None
        for _ in range(300):  # polled, not timed: the reaper runs every second
            if not client.documents:
                break
            await asyncio.sleep(0.1)
        assert client.documents == {}
        for _ in range(300):
            if not manager.clients() and not process_group_members(pgid):
                break
            await asyncio.sleep(0.1)
        assert manager.clients() == []
        assert process_group_members(pgid) == []
        # The next call starts it again.
        again = await call_tool(runtime, "lsp_definition", DEFINITION)
        assert rows_of(again) == EXPECTED
    finally:
        await stop_servers(runtime)


async def test_no_language_server_survives_exit_without_shutdown(tmp_path: Path) -> None:
    """The client sends `exit` without `shutdown` (or just goes away): toolhost's last-chance
    close must still take the language servers down."""
    root = copy_fixture("python", tmp_path)
    require_server("python", root)

    async def answer_nothing(method: str, params: object) -> object:
        return None

    toolhost = JsonRpcProcess(
        SERVER_COMMAND,
        cwd=str(root),
        env={**os.environ},
        on_request=answer_nothing,
        on_notification=lambda method, params: None,
    )
    await toolhost.start()
    try:
        await toolhost.request(
            "initialize",
            {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}},
            120,
        )
        await toolhost.notify("initialized", {})
        result = await toolhost.request(
            "toolhost/call", {"name": "lsp_definition", "arguments": DEFINITION}, 120
        )
        assert rows_of(result) == EXPECTED
        status = await toolhost.request("toolhost/status", {}, 30)
        pgid = status["languageServers"][0]["pid"]
        assert process_group_members(pgid)
        await toolhost.notify("exit", None)
        await asyncio.wait_for(toolhost.exited.wait(), 60)
    finally:
        await toolhost.stop()
    for _ in range(50):
        if not process_group_members(pgid):
            break
        await asyncio.sleep(0.1)
    assert process_group_members(pgid) == []
