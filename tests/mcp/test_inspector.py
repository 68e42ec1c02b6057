"""The MCP Inspector CLI (npm @modelcontextprotocol/inspector, installed by
scripts/setup/60-mcp-inspector.sh from tests/mcp/npm/package-lock.json) against `toolhost mcp`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_server.tools.registry import build_registry
from tests.conftest import require_program
from tests.mcp.clients import toolhost_command

pytestmark = pytest.mark.real_client

REPO = Path(__file__).resolve().parents[2]
INSPECTOR = REPO / ".tools" / "mcp-inspector" / "node_modules" / ".bin" / "mcp-inspector"


def inspect(root: Path, *method: str) -> Any:
    program = require_program(
        str(INSPECTOR), "the MCP Inspector CLI; scripts/setup/60-mcp-inspector.sh"
    )
    command = [
        program,
        "--cli",
        *toolhost_command(),
        "mcp",
        "--root",
        str(root),
        "--attach",
        "never",
        *method,
    ]
    done = subprocess.run(
        command, cwd=root, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_inspector_lists_the_tools(ws: Path) -> None:
    listed = inspect(ws, "--method", "tools/list")
    names = [tool["name"] for tool in listed["tools"]]
    assert names == build_registry().names("full")
    read_file = next(tool for tool in listed["tools"] if tool["name"] == "read_file")
    assert read_file["annotations"]["readOnlyHint"] is True


def test_inspector_calls_a_tool(ws: Path) -> None:
    result = inspect(
        ws, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=hello.txt"
    )
    assert result["isError"] is False
    assert "hello from the fixture" in result["content"][0]["text"]
