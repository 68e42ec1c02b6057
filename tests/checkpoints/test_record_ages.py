"""The end times trimming reads from record files, kept until a file changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints import record_ages
from lsp_server.checkpoints.record_ages import RecordAges, plain_records
from lsp_server.home.replace_file import write_atomically


def _write(path: Path, ended: dict[int, float]) -> None:
    lines = [json.dumps({"seq": seq, "ended": when}) for seq, when in ended.items()]
    write_atomically(path, "".join(line + "\n" for line in lines).encode())


def test_a_record_file_rewritten_in_place_is_read_again(tmp_path: Path) -> None:
    batch = tmp_path / "00000001-00000002.jsonl"
    _write(batch, {1: 100.0, 2: 200.0})
    ages = RecordAges()
    files = [(1, 2, batch.name)]
    assert ages.ended(tmp_path, files)(1) == 100.0
    # The same name and size, another inode (record files are replaced whole).
    _write(batch, {1: 300.0, 2: 400.0})
    ended = ages.ended(tmp_path, files)
    assert (ended(1), ended(2)) == (300.0, 400.0)


def test_an_unchanged_file_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batch = tmp_path / "00000001-00000002.jsonl"
    _write(batch, {1: 100.0, 2: 200.0})
    parsed: list[Path] = []

    def counted(path: Path) -> list[dict[str, Any]]:
        parsed.append(path)
        return plain_records(path)

    monkeypatch.setattr(record_ages, "plain_records", counted)
    ages = RecordAges()
    for _ in range(3):  # three trims
        assert ages.ended(tmp_path, [(1, 2, batch.name)])(2) == 200.0
    assert parsed == [batch]


def test_missing_or_unlisted_checkpoints_count_as_old(tmp_path: Path) -> None:
    ages = RecordAges()
    gone = tmp_path / "00000003.json"
    ended = ages.ended(tmp_path, [(3, 3, gone.name)])
    assert ended(3) == 0.0
    assert ended(9) == 0.0
