"""docs/SECURITY.md's threat-model tables name the test that shows each row: every test
file and test function they name exists (a renamed test must not leave a row unbacked)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "SECURITY.md"
TEST_REF = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?")
MORE_NAMES = re.compile(r"`::(\w+)")
TS_TEST = re.compile(r"`([\w]+\.test\.ts)`")


def _rows() -> list[str]:
    return [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("|")]


def test_every_test_a_row_names_exists() -> None:
    missing: list[str] = []
    named = 0
    for row in _rows():
        last_file: Path | None = None
        for match in TEST_REF.finditer(row):
            last_file = REPO / match.group(1)
            named += 1
            if not last_file.is_file():
                missing.append(match.group(1))
            elif match.group(2) and f"def {match.group(2)}(" not in last_file.read_text():
                missing.append(f"{match.group(1)}::{match.group(2)}")
        for name in MORE_NAMES.findall(row):
            if last_file is None or f"def {name}(" not in last_file.read_text():
                missing.append(f"{last_file}::{name}")
    assert named >= 50, "the threat-model tables should name the tests behind their rows"
    assert missing == []


def test_every_extension_test_a_row_names_exists() -> None:
    tests = {p.name for p in (REPO / "extension" / "vscode" / "src").rglob("*.test.ts")}
    named = {name for row in _rows() for name in TS_TEST.findall(row)}
    assert named and named <= tests, sorted(named - tests)
