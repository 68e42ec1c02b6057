"""Paths and helpers: real VS Code (code-server + headless Debian chromium + playwright-core).

scripts/setup/50-vscode.sh installs code-server and playwright-core into .tools/code-server
and chromium from Debian. A missing piece fails the test when TOOLHOST_REQUIRE_CLIENTS=1 (CI)
and skips it with the reason elsewhere.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import clients_required, require_program

REPO = Path(__file__).resolve().parents[2]
EXTENSION_DIR = REPO / "extension" / "vscode"
PROBE_EXTENSION_DIR = Path(__file__).resolve().parent / "e2e-extension"
CODE_SERVER_ROOT = REPO / ".tools" / "code-server"
CODE_SERVER = CODE_SERVER_ROOT / "node_modules" / ".bin" / "code-server"
PLAYWRIGHT = CODE_SERVER_ROOT / "node_modules" / "playwright-core"
ARTIFACTS = REPO / "test-artifacts" / "vscode"


def missing(what: str, why: str) -> None:
    """Skip with the reason, or fail in CI (TOOLHOST_REQUIRE_CLIENTS=1)."""
    message = f"{what} is missing: {why} (./run setup runs scripts/setup/50-vscode.sh)"
    if clients_required():
        pytest.fail(message)
    pytest.skip(message)


def find_program(name_or_path: str | Path, why: str) -> Path:
    return Path(require_program(str(name_or_path), why))


def vsce_package(source: Path, out: Path) -> Path:
    """Packages an extension folder to a .vsix with the extension's pinned vsce."""
    vsce = EXTENSION_DIR / "node_modules" / ".bin" / "vsce"
    if not vsce.exists():
        missing("extension/vscode/node_modules", "npm ci in extension/vscode installs vsce")
    subprocess.run(
        [
            str(vsce),
            "package",
            "--no-dependencies",
            "--no-rewrite-relative-links",
            "--out",
            str(out),
        ],
        cwd=source,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out
