"""The only editor -> agent messages toolhost changes on their way:

- `initialize`: clientCapabilities.fs.readTextFile, fs.writeTextFile and terminal become
  true (toolhost serves them whatever the editor declared); the editor's own are kept.
- `session/new`, `session/load` (and the unstable `session/resume`, `session/fork`):
  toolhost's MCP server is appended to `mcpServers`
  (unless turned off, or a server of that name is there already), as a stdio server that
  attaches to this proxy's runtime.
"""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path
from typing import Any

MCP_NAME = "toolhost"
# What the MCP child needs to find this proxy's attach socket and state folder.
_PASSED_ENV = ("TOOLHOST_STATE_DIR", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "HOME")


def initialize(params: Any) -> tuple[Any, dict[str, Any]]:
    """The params to forward, and the editor's own client capabilities."""
    if not isinstance(params, dict):
        return params, {}
    declared = params.get("clientCapabilities")
    editor = copy.deepcopy(declared) if isinstance(declared, dict) else {}
    declared_fs = editor.get("fs")
    fs: dict[str, Any] = declared_fs if isinstance(declared_fs, dict) else {}
    capabilities = {
        **editor,
        "fs": {**fs, "readTextFile": True, "writeTextFile": True},
        "terminal": True,
    }
    return {**params, "clientCapabilities": capabilities}, editor


def mcp_server(root: Path) -> dict[str, Any]:
    """ACP's stdio McpServer for `toolhost mcp` over `root`."""
    env = [{"name": name, "value": os.environ[name]} for name in _PASSED_ENV if name in os.environ]
    return {
        "name": MCP_NAME,
        "command": sys.executable,
        "args": ["-m", "lsp_server", "mcp", "--root", str(root), "--attach", "auto"],
        "env": env,
    }


def with_mcp_server(params: dict[str, Any], root: Path) -> dict[str, Any]:
    servers = params.get("mcpServers")
    if not isinstance(servers, list):
        return params
    if any(isinstance(s, dict) and s.get("name") == MCP_NAME for s in servers):
        return params
    return {**params, "mcpServers": [*servers, mcp_server(root)]}


def editor_fs(capabilities: dict[str, Any]) -> tuple[bool, bool]:
    """Whether the editor serves fs/read_text_file and fs/write_text_file itself."""
    fs = capabilities.get("fs")
    if not isinstance(fs, dict):
        return False, False
    return fs.get("readTextFile") is True, fs.get("writeTextFile") is True
