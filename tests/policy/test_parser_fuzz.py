"""The parser fuzz (issue 27): a million hostile strings through the guarded bash parse, in
a child process (a crash in C would kill it, and the test sees the signal), 0 crashes.

Without the guard (non-ASCII mapped to letters before parsing, bash_tree.py) the same
strings crash tree-sitter-bash 0.25.1's external scanner in about one run of three."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PARSES = 1_000_000
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(900)
def test_a_million_hostile_parses_crash_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.policy.fuzz_bash_parse", "--parses", str(PARSES)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"exit {done.returncode} (negative: killed by that signal)"
    assert done.stdout.strip() == f"parses={PARSES}"
