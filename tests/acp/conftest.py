from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp.harness import node_folder


@pytest.fixture
def node(tmp_path: Path) -> Path:
    return node_folder(tmp_path)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A small git-rooted workspace, with a secret file."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "notes.md").write_text("# Notes\n\nline three\n", encoding="utf-8")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (root / ".env").write_text("API_KEY=do-not-leak\n", encoding="utf-8")
    return root
