"""toolhost installed from its wheel into a fresh venv, used from a folder far from the
checkout with a temporary HOME: a real MCP session (the official SDK's client), a real LSP
session, and the CLI commands. Nothing may be read from the checkout (audit_hook.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation

from tests.dist.conftest import assert_checkout_untouched
from tests.helpers import make_test_client
from tests.warm.test_warm_start import WarmProcesses

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def text_of(result: object) -> str:
    return "".join(part.text for part in result.content if part.type == "text")  # type: ignore[attr-defined]


async def test_an_mcp_session_from_the_installed_wheel(
    user_venv: Path, user_env: dict[str, str], far_folder: Path
) -> None:
    params = StdioServerParameters(
        command="toolhost", args=["mcp"], env=user_env, cwd=str(far_folder)
    )
    params.command = str(user_venv / "bin" / "toolhost")
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=Implementation(name="far", version="1")) as mcp,
    ):
        await mcp.initialize()
        names = {tool.name for tool in (await mcp.list_tools()).tools}
        assert {"read_file", "grep", "code_index", "bash"} <= names, names
        read = await mcp.call_tool("read_file", {"path": "README.md"})
        assert not read.is_error and "hello from outside the checkout" in text_of(read)
        found = await mcp.call_tool("grep", {"pattern": "def make_circle"})
        assert not found.is_error and "pkg/shapes.py" in text_of(found), text_of(found)
        outline = await mcp.call_tool("code_index", {"action": "search", "query": "Circle"})
        assert not outline.is_error and "class Circle" in text_of(outline), text_of(outline)
        ran = await mcp.call_tool("bash", {"command": "echo from-the-sandbox > made.txt; pwd"})
        assert not ran.is_error, text_of(ran)
        assert str(far_folder) in text_of(ran)
    assert (far_folder / "made.txt").read_text() == "from-the-sandbox\n"
    assert_checkout_untouched(user_env)


async def test_a_warm_start_from_the_installed_wheel(
    user_venv: Path, user_env: dict[str, str], far_folder: Path
) -> None:
    """`toolhost mcp --warm` as installed: the first start leaves a warm process (its stamp
    made from the installed package), the next session is a child of it, and a command
    runs in the sandbox from there."""
    toolhost = str(user_venv / "bin" / "toolhost")
    warm = WarmProcesses(user_env["XDG_RUNTIME_DIR"])
    try:
        subprocess.run(
            [toolhost, "mcp", "--warm"], input=b"", env=user_env, cwd=far_folder, timeout=300
        )
        warm.serving()
        params = StdioServerParameters(
            command=toolhost, args=["mcp", "--warm"], env=user_env, cwd=str(far_folder)
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, client_info=Implementation(name="far", version="1")) as mcp,
        ):
            await mcp.initialize()
            found = await mcp.call_tool("read_file", {"path": "README.md"})
            assert "hello from outside the checkout" in text_of(found), text_of(found)
            ran = await mcp.call_tool("bash", {"command": "echo warm > warm.txt; echo $PPID"})
            assert not ran.is_error, text_of(ran)
            # A fork keeps the warm process's command line; only its children work in the
            # project folder (the warm process itself works in /).
            children = [pid for pid in _pids() if _warm_child_in(pid, far_folder)]
            assert len(children) == 1, children
    finally:
        warm.end()
    assert (far_folder / "warm.txt").read_text() == "warm\n"
    log = next(warm.folder.glob("warm-*.log")).read_text()
    assert "Traceback" not in log, log


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _warm_child_in(pid: int, folder: Path) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        return b"lsp_server.warm import zygote" in command and os.readlink(
            f"/proc/{pid}/cwd"
        ) == str(folder)
    except OSError:
        return False


async def test_an_lsp_session_from_the_installed_wheel(
    user_venv: Path, user_env: dict[str, str], far_folder: Path
) -> None:
    client = make_test_client()
    await client.start_io(
        str(user_venv / "bin" / "toolhost"), "serve", env=user_env, cwd=str(far_folder)
    )
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=far_folder.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=far_folder.as_uri(), name="far")],
            )
        )
        tools = await client.protocol.send_request_async("toolhost/tools", {"surface": "full"})
        assert "code_index" in {tool["name"] for tool in tools["tools"]}
        call = {"name": "grep", "arguments": {"pattern": "return 3.14"}, "session": "s"}
        found = await client.protocol.send_request_async("toolhost/call", call)
        assert found["isError"] is False, found
        assert "pkg/shapes.py" in found["content"][0]["text"]
        index = {"name": "code_index", "arguments": {"action": "outline", "path": "pkg"}}
        outline = await client.protocol.send_request_async(
            "toolhost/call", {**index, "session": "s"}
        )
        assert "make_circle" in outline["content"][0]["text"], outline
    finally:
        await client.shutdown_session()
        await client.stop()  # type: ignore[no-untyped-call]
    assert_checkout_untouched(user_env)


def run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["toolhost", *args],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
        executable=str(Path(env["PATH"].split(":")[0]) / "toolhost"),
    )  # fmt: skip


def test_call_index_and_doctor_from_any_folder(
    user_env: dict[str, str], far_folder: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    called = run(user_env, elsewhere, "call", "read_file", json.dumps({"path": "pkg/shapes.py"}),
                 "--root", str(far_folder))  # fmt: skip
    assert called.returncode == 0 and "class Circle" in called.stdout, called.stderr
    grep = run(user_env, far_folder, "call", "grep", json.dumps({"pattern": "Circle\\(\\)"}))
    assert grep.returncode == 0 and "pkg/shapes.py" in grep.stdout, grep.stderr
    indexed = run(user_env, far_folder, "index")
    assert indexed.returncode == 0, indexed.stderr
    assert "1 file" in indexed.stdout + indexed.stderr or "files" in indexed.stdout, indexed
    doctor = run(user_env, elsewhere, "doctor", "--root", str(far_folder))
    assert doctor.returncode == 0, doctor.stderr
    # The doctor says which toolhost runs and that what it carries came with the wheel ...
    venv = Path(user_env["PATH"].split(":")[0]).parent
    first = doctor.stdout.splitlines()[:3]
    assert first[0].startswith("toolhost ") and str(venv) in first[0], first
    assert first[1].startswith("  ripgrep   ok") and str(venv) in first[1], first
    assert first[2].startswith("  grammars  ok"), first
    # ... and names what this machine lacks (language servers, sandbox) and how to get it,
    # never with a checkout's path.
    assert "sandbox:" in doctor.stdout
    assert ".tools/" not in doctor.stdout, doctor.stdout
    if "MISSING" in doctor.stdout:
        assert "install " in doctor.stdout
    assert_checkout_untouched(user_env)
