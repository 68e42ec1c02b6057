"""Error codes that only odd conditions produce: each test makes the condition real and
checks the code, the cause and the recovery the model reads."""

from __future__ import annotations

import logging
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_server.core.contract import ContractEntry, Registry, Tool
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext
from lsp_server.tools.registry import build_registry
from tests.conftest import missing_part, require_program
from tests.helpers import call_tool, make_runtime, text_of
from tests.langservers.conftest import lsp_runtime, stop_servers

FAKE_SERVER = Path(__file__).resolve().parents[1] / "server" / "fake_erroring_language_server.py"


def workspace_with(tmp_path: Path, name: str, data: bytes) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / name).write_bytes(data)
    return root


async def test_fs_too_large_names_the_size_and_the_limit(tmp_path: Path) -> None:
    root = workspace_with(tmp_path, "big.log", b"x" * 2000 + b"\n")
    runtime = make_runtime(root, {"limits": {"maxFileBytes": 1000}})
    result = await call_tool(runtime, "read_file", {"path": "big.log"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE"
    assert text_of(result) == (
        "FS_TOO_LARGE: big.log has 2001 bytes, over the 1000 byte limit; "
        "use grep to find what you need in it"
    )


@pytest.fixture
def immutable_file(tmp_path: Path) -> Any:
    """A file the kernel refuses to replace even for root: `chattr +i` (ext4, xfs, btrfs).
    Root ignores mode bits, so a read-only mode alone would not make the write fail."""
    chattr = require_program("chattr", "FS_PERMISSION needs an immutable file as root")
    root = workspace_with(tmp_path, "locked.txt", b"keep me\n")
    target = root / "locked.txt"
    done = subprocess.run([chattr, "+i", str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        missing_part(f"chattr +i is not supported here: {done.stderr.strip()}")
    try:
        yield root
    finally:
        subprocess.run([chattr, "-i", str(target)], check=True)


async def test_fs_permission_when_the_os_refuses_the_write(immutable_file: Path) -> None:
    root = immutable_file
    runtime = make_runtime(root)
    await call_tool(runtime, "read_file", {"path": "locked.txt"})
    result = await call_tool(
        runtime, "edit_file", {"path": "locked.txt", "old_string": "keep", "new_string": "lose"}
    )
    assert result.error is not None and result.error.code == "FS_PERMISSION", text_of(result)
    assert text_of(result) == (
        "FS_PERMISSION: locked.txt cannot be written (Operation not permitted); "
        "check its permissions"
    )
    assert (root / "locked.txt").read_bytes() == b"keep me\n"
    assert sorted(p.name for p in root.iterdir()) == ["locked.txt"]  # no temporary left


async def test_edit_unencodable_keeps_the_file_in_its_encoding(tmp_path: Path) -> None:
    original = "caf\u00e9 cr\u00e8me, na\u00efve d\u00e9j\u00e0 vu\n".encode("latin-1")
    root = workspace_with(tmp_path, "menu.txt", original)
    runtime = make_runtime(root)
    read = await call_tool(runtime, "read_file", {"path": "menu.txt"})
    assert "caf\u00e9" in text_of(read)
    result = await call_tool(
        runtime,
        "edit_file",
        {"path": "menu.txt", "old_string": "vu", "new_string": "\u65e5\u672c"},
    )
    assert result.error is not None and result.error.code == "edit.unencodable", text_of(result)
    assert text_of(result).startswith("edit.unencodable: menu.txt: ")
    assert text_of(result).endswith("; use characters the file's encoding has")
    assert (root / "menu.txt").read_bytes() == original


async def test_edit_no_change_for_edit_file(tmp_path: Path) -> None:
    root = workspace_with(tmp_path, "a.txt", b"alpha\n")
    runtime = make_runtime(root)
    await call_tool(runtime, "read_file", {"path": "a.txt"})
    result = await call_tool(
        runtime, "edit_file", {"path": "a.txt", "old_string": "alpha", "new_string": "alpha"}
    )
    assert result.error is not None and result.error.code == "edit.no_change"
    assert text_of(result).startswith("edit.no_change: ")
    assert (root / "a.txt").read_bytes() == b"alpha\n"


async def test_result_not_found_for_an_unknown_ref(tmp_path: Path) -> None:
    root = workspace_with(tmp_path, "a.txt", b"alpha\n")
    runtime = make_runtime(root)
    result = await call_tool(
        runtime,
        "use_capability",
        {"id": "session:tool_result", "action": "call", "arguments": {"result_ref": "r-nope"}},
    )
    assert result.error is not None and result.error.code == "result.not_found", text_of(result)
    assert "'r-nope'" in text_of(result)
    assert "re-run the call that produced it" in text_of(result)


def closed_loopback_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_web_fetch_failed_on_a_refused_loopback_connection(tmp_path: Path) -> None:
    root = workspace_with(tmp_path, "a.txt", b"alpha\n")
    runtime = make_runtime(root, {"web": {"allowLoopback": True}})
    url = f"http://127.0.0.1:{closed_loopback_port()}/page"
    result = await call_tool(runtime, "web_fetch", {"url": url})
    assert result.error is not None and result.error.code == "web.fetch_failed", text_of(result)
    assert text_of(result).startswith(f"web.fetch_failed: fetching {url} failed: ConnectError")
    assert text_of(result).endswith("; check the URL and that the host is reachable")


@pytest.mark.slow
async def test_lsp_request_failed_carries_the_servers_message(tmp_path: Path) -> None:
    # A FAKE language server (named as such): no real server answers a well-formed
    # definition request with an error on demand.
    root = workspace_with(tmp_path, "main.py", b"def main():\n    return 1\n")
    runtime = lsp_runtime(
        root, {"lsp": {"servers": {"python": [sys.executable, str(FAKE_SERVER)]}}}
    )
    try:
        result = await call_tool(
            runtime, "lsp_definition", {"path": "main.py", "line": 1, "symbol": "main"}
        )
    finally:
        await stop_servers(runtime)
    assert result.error is not None and result.error.code == "lsp.request_failed", text_of(result)
    # The server is named by its command's program: here the Python interpreter.
    assert text_of(result) == (
        f"lsp.request_failed: {Path(sys.executable).name} answered with an error: "
        "FAKE: cannot resolve this position (on purpose) (code -32602); "
        "check path, line and symbol (the symbol must be on that line), or use grep"
    )


async def _explode(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    raise RuntimeError("a bug planted by the test")


EXPLODING = Tool(
    ContractEntry(
        name="explode",
        read_only=True,
        description="A test-only tool that raises.",
        schema={"type": "object", "properties": {}, "additionalProperties": False},
    ),
    _explode,
)


async def test_internal_error_has_an_incident_id_and_the_server_keeps_running(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = workspace_with(tmp_path, "a.txt", b"alpha\n")
    # A test-only registry: the real tools plus one that raises.
    runtime = make_runtime(root, registry=Registry([*build_registry().all_tools(), EXPLODING]))
    with caplog.at_level(logging.ERROR):
        result = await call_tool(runtime, "explode", {})
    assert result.error is not None and result.error.code == "internal_error"
    match = re.fullmatch(
        r"internal_error: toolhost hit a bug \(RuntimeError, incident ([0-9a-f]{8})\); "
        r"the server keeps running; report the incident id from the log, or try another way",
        text_of(result),
    )
    assert match, text_of(result)
    incident = match.group(1)
    [record] = [r for r in caplog.records if incident in r.getMessage()]
    assert record.exc_info is not None and "a bug planted by the test" in str(record.exc_info[1])
    after = await call_tool(runtime, "read_file", {"path": "a.txt"})
    assert not after.is_error and "alpha" in text_of(after)


async def test_timeout_when_a_call_outlives_limits_call_timeout_seconds(tmp_path: Path) -> None:
    """The dispatch deadline stops the call (and its command) with `timeout`, not an
    internal error, and says which limit ended it."""
    root = tmp_path / "ws"
    root.mkdir()
    runtime = make_runtime(root, {"limits": {"callTimeoutSeconds": 1}})
    command = "sleep 31.25"
    result = await call_tool(runtime, "bash", {"command": command, "timeout_ms": 60_000})
    assert result.error is not None and result.error.code == "timeout", text_of(result)
    assert text_of(result).startswith(
        "timeout: bash did not finish within 1 s (limits.call_timeout_seconds) and was stopped"
    )
    assert result.error.recovery and "limits.call_timeout_seconds" in result.error.recovery
    left = subprocess.run(["pgrep", "-f", command], capture_output=True, text=True)
    assert left.stdout == "", "the command outlived its call"
