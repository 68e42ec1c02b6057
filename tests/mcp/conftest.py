from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A small workspace with a .git root marker."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "hello.txt").write_text("hello from the fixture\n", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n\nline three\n", encoding="utf-8")
    return root


@pytest.fixture
def bypass_policy() -> None:
    """The user's own config allows every call (as `mode = "bypass"` does for a real user)."""
    import os

    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "toolhost"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text('[policy]\nmode = "bypass"\n', encoding="utf-8")
