"""Issue 28's acceptance: `bench/peers.py` runs toolhost and the official filesystem MCP
server (pinned by bench/npm/package-lock.json, installed by the set-up) side by side and
prints the table with ratios. Run here with the smallest sizes (what it measures is in
docs/BENCHMARKS.md; no figure is asserted, only that every row is measured on both)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import missing_part

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
FILESYSTEM = REPO / ".tools/bench-peers/node_modules/@modelcontextprotocol/server-filesystem"
ROWS = (
    "start -> initialize answered (median of 1)",
    "first tools/list, sent at once after the opening",
    "start -> tools/list answered",
    "first read, sent at once after tools/list",
    "start -> that first read answered",
    "first read, sent 1 s after start",
    "4 KiB read x20, p50 / p95",
)


def test_peers_prints_both_servers_side_by_side_with_ratios() -> None:
    if not (FILESYSTEM / "package.json").is_file():
        missing_part("the filesystem MCP server is not installed (scripts/setup/65-bench-peers.sh)")
    command = [sys.executable, "bench/peers.py", "--starts", "1", "--calls", "20", "--rounds", "1"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert table[0] == "| | toolhost mcp | server-filesystem | ratio |", done.stdout
    cells = {row.split(" | ")[0].removeprefix("| "): row.split(" | ")[1:] for row in table[2:]}
    assert set(cells) == set(ROWS), done.stdout
    number = r"\d+(\.\d+)?"
    for label in ROWS:
        ours, theirs, ratio = cells[label]
        assert re.fullmatch(f"{number}( / {number})? ms", ours), (label, ours)
        assert re.fullmatch(f"{number}( / {number})? ms", theirs), (label, theirs)
        assert re.fullmatch(r"\d+\.\d+x( / \d+\.\d+x)? \|", ratio), (label, ratio)
