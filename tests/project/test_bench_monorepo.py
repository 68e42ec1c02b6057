"""Issue 43's benchmark at a smoke-test size: `bench/monorepo.py` builds its repository and
plain folder, drives `toolhost mcp` over stdio and prints every row of the table beside
its reference (no figure is asserted: they are in docs/BENCHMARKS.md), then deletes the
tree."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ROWS = (
    "first writing command",
    "second writing command",
    "later writing commands",
    "grep right after the first snapshot",
    "`glob **/*.go`, first",
    "`glob **/*.go`, again",
    "`grep` (match)",
    "`grep` (no match)",
    "`code_index search urlopen` before the index",
    "`code_index search getaddrinfo` before the index",
    "`code_index search ParseResult` before the index",
    "`grep` while the index builds",
    "server peak RSS",
    "inotify watches held",
    "fanotify folder marks held",
    "non-git folder, first writing command",
)


def test_monorepo_prints_every_row_beside_its_reference(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    command = [
        sys.executable, "bench/monorepo.py", "--files", "1500", "--plain-files", "300",
        "--runs", "1", "--tree", str(tree),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert table[0] == "| step | toolhost | reference | ratio |", done.stdout
    cells = {row.split(" | ")[0].removeprefix("| "): row.split(" | ")[1:] for row in table[2:]}
    assert list(cells) == list(ROWS), done.stdout
    for label in ROWS[:12] + ROWS[15:]:
        ours, reference, ratio = cells[label]
        assert re.fullmatch(r"\d+\.\d\d s( \(\d+\.\d\d-\d+\.\d\d\))?", ours), (label, ours)
        assert re.search(r" \d+\.\d\d s$", reference), (label, reference)
        assert re.fullmatch(r"\d+\.\d\dx \|", ratio), (label, ratio)
    assert re.fullmatch(r"\d+ MB", cells["server peak RSS"][0])
    assert re.fullmatch(r"\d+", cells["inotify watches held"][0])
    assert re.fullmatch(r"\d+", cells["fanotify folder marks held"][0])
    assert "load average" in done.stdout
    assert not tree.exists()  # deleted after the run


def test_monorepo_only_search_prints_the_search_rows(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    command = [
        sys.executable, "bench/monorepo.py", "--files", "800", "--plain-files", "100",
        "--runs", "2", "--tree", str(tree), "--only-search",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    labels = [row.split(" | ")[0].removeprefix("| ") for row in table[2:]]
    assert labels == [
        "grep right after the first snapshot",
        "`glob **/*.go`, first",
        "`glob **/*.go`, again",
        "`grep` (match)",
        "`grep` (no match)",
        "`grep` while the index builds",
    ], done.stdout
    assert all(re.search(r" \d+\.\d\dx \|$", row) for row in table[2:]), done.stdout
