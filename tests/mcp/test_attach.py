"""Attach: `toolhost mcp` runs its calls in the runtime of an editor-started `toolhost serve`
(a real server over LSP here; the Neovim test adds a real editor)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from lsp_server.attach import attach_client, attach_records, wire
from lsp_server.home.dirs import Dirs
from tests.helpers import lsp_session
from tests.mcp.clients import RawMcp, mcp_session, structured, text_of

EDITOR_OPTIONS = {"policy": {"mode": "acceptEdits"}}


def attach_folder() -> Path:
    return Dirs.from_environment().attach_folder


async def wait_for_record(root: Path) -> attach_records.Record:
    for _ in range(200):
        records = attach_records.find_records(attach_folder(), root)
        if records:
            return records[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no discovery record for {root} in {attach_folder()}")


async def test_socket_and_record_are_private(ws: Path) -> None:
    async with lsp_session(ws, EDITOR_OPTIONS):
        record = await wait_for_record(ws)
        folder = attach_folder()
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        socket_info = record.socket.lstat()
        assert stat.S_ISSOCK(socket_info.st_mode) and stat.S_IMODE(socket_info.st_mode) == 0o600
        assert stat.S_IMODE(record.file.stat().st_mode) == 0o600
        data = json.loads(record.file.read_text())
        assert data["root"] == str(ws) and data["socket"] == str(record.socket)
        assert data["pid"] != os.getpid() and len(data["token"]) >= 32
        record_file = record.file
    # A clean shutdown takes both away.
    assert not record_file.exists() and not record.socket.exists()


async def _exchange(record: attach_records.Record, *messages: dict[str, Any]) -> list[Any]:
    reader, writer = await asyncio.open_unix_connection(str(record.socket))
    answers = []
    for message in messages:
        try:
            writer.write(wire.encode(message))
            await writer.drain()
            answers.append(await asyncio.wait_for(wire.read_message(reader), 10))
        except (wire.ConnectionLost, ConnectionError):
            answers.append(None)  # the server closed the connection
    writer.close()
    return answers


async def test_a_client_without_the_token_is_refused(ws: Path) -> None:
    async with lsp_session(ws, EDITOR_OPTIONS):
        record = await wait_for_record(ws)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "toolhost/call",
            "params": {"name": "read_file", "arguments": {"path": "hello.txt"}},
        }
        wrong = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "toolhost/attach",
            "params": {"token": "guess"},
        }
        refused, closed = await _exchange(record, wrong, call)
        assert refused["error"]["code"] == wire.WRONG_TOKEN and closed is None
        (skipped_handshake,) = await _exchange(record, call)
        assert skipped_handshake["error"]["code"] == wire.WRONG_TOKEN
        right = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "toolhost/attach",
            "params": {"token": record.token, "client": {"name": "raw"}},
        }
        attached, answered = await _exchange(record, right, call)
        assert attached["result"]["session"] == "mcp:raw"
        assert "hello from the fixture" in answered["result"]["content"][0]["text"]


async def test_status_on_the_socket_needs_the_token_and_attaches_no_session(ws: Path) -> None:
    """`toolhost doctor` asks the editor's runtime who answers lsp_* questions."""
    async with lsp_session(ws, EDITOR_OPTIONS) as client:
        record = await wait_for_record(ws)
        ask = {"jsonrpc": "2.0", "id": 1, "method": "toolhost/status", "params": {}}
        (refused,) = await _exchange(record, {**ask, "params": {"token": "guess"}})
        assert refused["error"]["code"] == wire.WRONG_TOKEN
        found = await attach_client.editor_status(attach_folder(), ws)
        assert found is not None
        assert found[0] == record and found[1]["lspAnswers"]["provider"] == "auto"
        status = await client.protocol.send_request_async("toolhost/status", {})
        assert status["mcpSessions"] == []


@pytest.mark.slow
async def test_mcp_calls_run_in_the_editor_runtime(ws: Path) -> None:
    async with lsp_session(ws, EDITOR_OPTIONS) as editor:
        await wait_for_record(ws)
        async with mcp_session(ws, name="claude-code") as session:
            read = await session.call_tool("read_file", {"path": "notes.md"})
            edit = await session.call_tool(
                "edit_file",
                {"path": "notes.md", "old_string": "line three", "new_string": "line 3"},
            )
            status = await editor.protocol.send_request_async("toolhost/status", {})
        assert read.meta["toolhost"]["runtime"].startswith("editor (pid ")
        assert edit.is_error is False, text_of(edit)
        assert (ws / "notes.md").read_text() == "# Notes\n\nline 3\n"
        attached = status["mcpSessions"]
        assert [s["client"] for s in attached] == ["claude-code"]
        assert attached[0]["session"] == "mcp:claude-code" and attached[0]["calls"] == 2
        assert {c["session"] for c in editor.did_calls} == {"mcp:claude-code"}


@pytest.mark.slow
async def test_editor_gone_falls_back_to_local_and_says_so_once(
    ws: Path, bypass_policy: None
) -> None:
    editor = lsp_session(ws, EDITOR_OPTIONS)
    await editor.__aenter__()
    try:
        await wait_for_record(ws)
        async with mcp_session(ws) as session:
            first = await session.call_tool("read_file", {"path": "hello.txt"})
            assert first.meta["toolhost"]["runtime"].startswith("editor")
            await editor.__aexit__(None, None, None)  # the editor's server goes away
            editor = None
            after = await session.call_tool("read_file", {"path": "hello.txt"})
            later = await session.call_tool("read_file", {"path": "hello.txt"})
    finally:
        if editor is not None:
            await editor.__aexit__(None, None, None)
    assert after.is_error is False
    assert after.meta["toolhost"]["runtime"] == "local"
    assert "went away; calls now run in a local runtime" in text_of(after)
    assert "went away" not in text_of(later)


async def test_attach_require_refuses_without_an_editor(ws: Path) -> None:
    async with mcp_session(ws, "--attach", "require") as session:
        result = await session.call_tool("read_file", {"path": "hello.txt"})
        with pytest.raises(MCPError) as unknown:  # no runtime ran it: still no such tool
            await session.call_tool("read_fil", {"path": "hello.txt"})
    assert result.is_error is True and structured(result)["code"] == "attach.unavailable"
    assert unknown.value.error.code == -32602
    assert unknown.value.error.data["closest"][0] == "read_file"


@pytest.mark.slow
async def test_attach_never_stays_local(ws: Path) -> None:
    async with lsp_session(ws, EDITOR_OPTIONS):
        await wait_for_record(ws)
        async with mcp_session(ws, "--attach", "never") as session:
            result = await session.call_tool("read_file", {"path": "hello.txt"})
    assert result.meta["toolhost"]["runtime"] == "local"


def _copy_record(record: attach_records.Record, name: str, **changes: Any) -> Path:
    data = {**record.as_json(), **changes}
    path = record.file.with_name(name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle)
    return path


async def test_stale_and_foreign_records_are_never_used(ws: Path) -> None:
    async with lsp_session(ws, EDITOR_OPTIONS):
        record = await wait_for_record(ws)
        dead = subprocess.Popen(["true"])
        dead.wait()
        dead_file = _copy_record(record, "0000dead.json", pid=dead.pid, started=record.started + 9)
        wrong_file = _copy_record(
            record, "0000wrong.json", token="not-the-token", started=record.started + 5
        )
        found = attach_records.find_records(attach_folder(), ws)
        assert not dead_file.exists()  # a dead pid's record is cleaned up
        assert [r.file for r in found] == [wrong_file, record.file]
        # The wrong token is refused by the server, forgotten, and the real record is used.
        editor = await attach_client.attach(attach_folder(), ws, {"name": "t"}, None)
        assert editor is not None and editor.record.file == record.file
        await editor.close()
        assert not wrong_file.exists()
        # Another user's socket (or record) is never used.
        foreign_socket = record.socket.with_name("foreign.sock")
        shutil.copy(record.file, record.file.with_name("unused.json"))
        os.symlink(record.socket, foreign_socket)
        foreign = _copy_record(
            record, "0000foreign.json", socket=str(foreign_socket), started=record.started + 7
        )
        os.chown(foreign, 65534, 65534)
        assert foreign not in [r.file for r in attach_records.find_records(attach_folder(), ws)]
        os.chown(foreign, os.getuid(), os.getgid())
        # A symlink is not a socket owned by us: refused as well.
        assert foreign not in [r.file for r in attach_records.find_records(attach_folder(), ws)]


@pytest.mark.slow
async def test_attached_progress_and_cancellation_reach_the_editor_runtime(ws: Path) -> None:
    from tests.mcp.test_sdk_client import _processes_with, _wait_gone

    seen: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    marker = f"{os.getpid() % 1000 + 8000}.5"
    async with lsp_session(ws, {"policy": {"mode": "bypass"}}):
        await wait_for_record(ws)
        async with mcp_session(ws, "--attach", "require") as session:
            steps = "for i in 1 2 3; do echo step$i; sleep 0.3; done"
            result = await session.call_tool(
                "bash", {"command": steps, "description": "steps"}, progress_callback=on_progress
            )
            assert result.is_error is False and result.meta["toolhost"]["runtime"].startswith(
                "editor"
            )
            assert any("step" in (m or "") for m in seen), seen
            call = asyncio.create_task(
                session.call_tool("bash", {"command": f"sleep {marker}", "description": "wait"})
            )
            for _ in range(200):
                if _processes_with(f"sleep {marker}"):
                    break
                await asyncio.sleep(0.05)
            assert _processes_with(f"sleep {marker}"), "the command never started"
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
            assert await _wait_gone(f"sleep {marker}") == []


def _running(command: str) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "cmdline").read_bytes().replace(
                    b"\0", b" "
                ).strip() == command.encode():
                    return True
    return False


@pytest.mark.slow
async def test_editor_gone_during_a_call_is_attach_lost(ws: Path, bypass_policy: None) -> None:
    editor = lsp_session(ws, EDITOR_OPTIONS)
    await editor.__aenter__()
    try:
        await wait_for_record(ws)
        async with mcp_session(ws) as session:
            call = asyncio.create_task(session.call_tool("bash", {"command": "sleep 37.25"}))
            for _ in range(600):  # until the command runs in the editor's runtime
                if _running("sleep 37.25"):
                    break
                await asyncio.sleep(0.05)
            await editor.__aexit__(None, None, None)  # the editor's server goes away
            editor = None
            lost = await call
    finally:
        if editor is not None:
            await editor.__aexit__(None, None, None)
    assert lost.is_error is True
    assert structured(lost)["code"] == "attach.lost", text_of(lost)
    assert "read the files it touches again" in text_of(lost)


@pytest.mark.slow
async def test_the_first_call_sent_at_once_is_the_editors_and_builds_no_local_runtime(
    ws: Path,
) -> None:
    """An agent's opening (initialize, initialized, tools/list, tools/call, all at once) beside
    an editor: the call runs in the editor's warm runtime, and `toolhost mcp` imports none of a
    local runtime for it, nor for the rest of the session (`-X importtime` names every module
    it imported). An unknown tool is still the protocol's error, its near names listed."""
    async with lsp_session(ws, EDITOR_OPTIONS):
        await wait_for_record(ws)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "lsp_server.cli",
            "mcp",
            "--root",
            str(ws),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(os.environ),
        )
        assert process.stderr is not None
        imports = asyncio.create_task(process.stderr.read())  # more than a pipe holds
        client = RawMcp(process)
        opening = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": OPENING},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": READ_HELLO},
        ]
        await client.send_bytes(b"\n".join(json.dumps(m).encode() for m in opening))
        read = (await client.answer(3))["result"]
        unknown = await client.request("tools/call", {"name": "read_fil", "arguments": {}})
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 60)
        imported = {
            line.rsplit("|", 1)[-1].strip()
            for line in (await imports).decode().splitlines()
            if line.startswith("import time:")
        }
    assert read["isError"] is False and "hello from the fixture" in read["content"][0]["text"]
    assert read["_meta"]["toolhost"]["runtime"].startswith("editor (pid ")
    assert unknown["error"]["code"] == -32602
    assert unknown["error"]["data"]["closest"][0] == "read_file"
    assert "lsp_server.mcp.stdio.front" in imported  # the listing is complete
    local_runtime = {
        "lsp_server.compose",
        "lsp_server.mcp.calls.local",
        "lsp_server.runtime.dispatch",
    }
    assert imported.isdisjoint(local_runtime), imported & local_runtime


OPENING = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "an-agent", "version": "1"},
}
READ_HELLO = {"name": "read_file", "arguments": {"path": "hello.txt"}}
