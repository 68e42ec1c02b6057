"""A repository's own language-server binaries (.venv/bin, node_modules/.bin) run only in a
trusted workspace outside readOnly mode: opening an untrusted clone must not run its code.

The hostile fixture puts every Python and TypeScript server name of the table in its
.venv/bin and node_modules/.bin, each a script that leaves a marker file when run."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_server.langservers.diagnosis import diagnose, render
from lsp_server.langservers.discovery import ServerNotFound, resolve_server
from lsp_server.langservers.table import ROWS_BY_NAME
from tests.helpers import call_tool, lsp_call, lsp_session, make_runtime, text_of
from tests.langservers.conftest import require_server, stop_servers

HOVER = {"path": "app.py", "symbol": "x", "line": 2}


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    root = tmp_path / "clone"
    markers = tmp_path / "markers"
    markers.mkdir()
    folders = {"python": root / ".venv" / "bin", "typescript": root / "node_modules" / ".bin"}
    for row_name, folder in folders.items():
        folder.mkdir(parents=True)
        for candidate in ROWS_BY_NAME[row_name].candidates:
            script = folder / candidate.program
            script.write_text(f"#!/bin/sh\ntouch '{markers}/{candidate.program}'\nexit 3\n")
            script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (root / "app.py").write_text("x = 1\nprint(x)\n")
    (root / "app.ts").write_text("const x = 1;\nconsole.log(x);\n")
    return root


def markers_of(root: Path) -> list[str]:
    return sorted(p.name for p in (root.parent / "markers").iterdir())


def test_discovery_skips_project_binaries_unless_allowed(hostile: Path) -> None:
    row = ROWS_BY_NAME["python"]
    allowed = resolve_server(row, hostile, {}, project_local=True)
    assert allowed.source == "project"
    require_server("python", hostile)
    refused = resolve_server(row, hostile, {}, project_local=False)
    assert refused.source != "project"
    assert not refused.program.is_relative_to(hostile)
    assert refused.skipped_project  # doctor can say what it left alone
    # A configured bare name is not looked up in the project either, only on PATH: with
    # the program on PATH it is that one; with PATH holding none, it is not found at all
    # (the project's own .venv/bin/pylsp is never the answer).
    on_path = hostile.parent / "on-path"
    on_path.mkdir()
    stub = on_path / "pylsp"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    assert (hostile / ".venv" / "bin" / "pylsp").exists()
    configured = resolve_server(
        row, hostile, {"python": ["pylsp"]}, project_local=False, search_path=str(on_path)
    )
    assert configured.program == stub
    with pytest.raises(ServerNotFound, match=r"lsp\.servers\.python"):
        resolve_server(
            row,
            hostile,
            {"python": ["pylsp"]},
            project_local=False,
            search_path=str(hostile.parent / "markers"),
        )


def test_path_entries_inside_the_workspace_are_skipped(hostile: Path) -> None:
    require_server("python", hostile)
    search_path = os.pathsep.join([str(hostile / ".venv" / "bin"), os.environ["PATH"]])
    server = resolve_server(
        ROWS_BY_NAME["python"], hostile, {}, project_local=False, search_path=search_path
    )
    assert not server.program.is_relative_to(hostile)


@pytest.mark.slow
async def test_untrusted_hover_does_not_run_the_clone(hostile: Path) -> None:
    require_server("python", hostile)
    runtime = make_runtime(hostile)
    try:
        for tool in ("lsp_hover", "lsp_diagnostics"):
            arguments = HOVER if tool == "lsp_hover" else {"path": "app.py"}
            result = await call_tool(runtime, tool, arguments)
            assert result.error is None, text_of(result)  # served by a real server
            assert markers_of(hostile) == [], text_of(result)
    finally:
        await stop_servers(runtime)


@pytest.mark.slow
async def test_trusted_workspace_uses_its_own_server(hostile: Path) -> None:
    """The positive control: the fixture's scripts do run when the project may use them."""
    runtime = make_runtime(hostile, {"lsp": {"project_servers": True}})
    try:
        await call_tool(runtime, "lsp_hover", HOVER)
    finally:
        await stop_servers(runtime)
    assert markers_of(hostile) == ["pyright-langserver"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "ran"),
    [
        ({"workspaceTrusted": False}, []),
        ({"workspaceTrusted": True, "policy": {"mode": "readOnly"}}, []),
        ({"workspaceTrusted": True}, ["pyright-langserver"]),
    ],
)
async def test_served_over_lsp(hostile: Path, options: dict[str, Any], ran: list[str]) -> None:
    require_server("python", hostile)
    async with lsp_session(hostile, options) as client:
        for tool in ("lsp_hover", "lsp_diagnostics"):
            arguments = HOVER if tool == "lsp_hover" else {"path": "app.py"}
            result = await lsp_call(client, tool, arguments)
            # Without the project's server a real one answers; with it, the fake crashes.
            assert result["isError"] == bool(ran), text_of(result)
    assert markers_of(hostile) == ran


@pytest.mark.slow
def test_doctor_says_why_project_servers_are_left_alone(hostile: Path) -> None:
    report = render(diagnose(hostile, {}, project_local=False))
    assert markers_of(hostile) == []  # the doctor did not run them either (version checks)
    assert "not used: the workspace is not trusted" in report
    assert str(Path(".venv") / "bin" / "pyright-langserver") in report
    done = subprocess.run(
        [sys.executable, "-m", "lsp_server", "doctor", "--root", str(hostile)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert "not used: the workspace is not trusted" in done.stdout, done.stdout + done.stderr
    assert markers_of(hostile) == []
