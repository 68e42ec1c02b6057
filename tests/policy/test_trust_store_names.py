"""The trust store keys a root by its name as bytes: a folder whose name is not UTF-8 is a
root like any other (its rules and its approved config are recorded and found again)."""

from __future__ import annotations

import os
from pathlib import Path

from lsp_server.config.trust import TrustStore


def test_a_root_whose_name_is_not_utf8_is_recorded_and_found(tmp_path: Path) -> None:
    root = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    root.mkdir()
    store = TrustStore(tmp_path / "state")
    store.record(root, "bash(make:*)")
    store.approve_config(root, root / ".toolhost.toml", "ab" * 32)
    assert store.is_recorded(root, "bash(make:*)")
    assert store.approved_config(root, root / ".toolhost.toml") == "ab" * 32
    assert not store.is_recorded(tmp_path, "bash(make:*)")
