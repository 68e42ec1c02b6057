"""The runnable examples (examples/*_read_file.*), one per face, each run as its own
process the way a reader runs it: each must print README.md of examples/workspace.

Their toolhost processes talk over stdio only; the state, config and runtime folders are
the test's own (tests/conftest.py sets them in the environment the scripts inherit)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
README = "A tiny inventory library used by toolhost's demo and tests."

pytestmark = pytest.mark.timeout(120)


def run_example(*command: str) -> str:
    """The example's output; it must exit 0 and leave examples/workspace as it was."""
    before = _workspace_files()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
    }
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=100, env=env, cwd=REPO, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert _workspace_files() == before
    return completed.stdout


def _workspace_files() -> dict[str, bytes]:
    root = EXAMPLES / "workspace"
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_lsp_example_reads_a_file_with_toolhost_call() -> None:
    out = run_example(sys.executable, str(EXAMPLES / "lsp_read_file.py"))
    assert "1→# inventory" in out and README in out


@pytest.mark.slow
def test_mcp_example_reads_a_file_with_tools_call() -> None:
    out = run_example(sys.executable, str(EXAMPLES / "mcp_read_file.py"))
    assert "1→# inventory" in out and README in out


def test_acp_example_reads_a_file_through_the_proxy() -> None:
    """The agent's fs/read_text_file answered by toolhost: the file's exact text."""
    out = run_example(sys.executable, str(EXAMPLES / "acp_read_file.py"))
    assert out == (EXAMPLES / "workspace" / "README.md").read_text(encoding="utf-8")


def test_cli_example_reads_a_file_with_toolhost_call() -> None:
    out = run_example("sh", str(EXAMPLES / "cli_read_file.sh"))
    assert "1→# inventory" in out and README in out
