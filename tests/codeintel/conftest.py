"""Shared helpers for the code-intelligence tests: fixtures and golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"

# Regenerate golden files with TOOLHOST_UPDATE_GOLDEN=1 (then review the diff).
UPDATE_GOLDEN = os.environ.get("TOOLHOST_UPDATE_GOLDEN") == "1"

FIXTURE_FILES = sorted(p.name for p in FIXTURES.iterdir() if p.is_file())


def check_golden(path: Path, actual: str) -> None:
    if UPDATE_GOLDEN or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        if not UPDATE_GOLDEN:
            pytest.fail(f"golden file {path.name} was missing; wrote it, review and re-run")
    assert actual == path.read_text(encoding="utf-8")
