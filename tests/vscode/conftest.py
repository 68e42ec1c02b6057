"""Fixtures for the VS Code extension's tests (see vscode_env.py for the installed tools)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.vscode.vscode_env import EXTENSION_DIR, find_program, missing, vsce_package


@pytest.fixture(scope="session")
def toolhost_vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension, freshly built and packaged (what a user installs)."""
    out = tmp_path_factory.mktemp("vsix")
    node = find_program("node", "Node.js builds the extension")
    if not (EXTENSION_DIR / "node_modules").exists():
        missing("extension/vscode/node_modules", "npm ci in extension/vscode")
    subprocess.run(
        [str(node), "esbuild.mjs", "--production"],
        cwd=EXTENSION_DIR,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return vsce_package(EXTENSION_DIR, out / "toolhost.vsix")
