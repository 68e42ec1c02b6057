"""keyed_cache: the newest KEEP keys side by side; a refreshed key counts as new."""

from __future__ import annotations

from pathlib import Path

from lsp_server.home import keyed_cache


def test_the_newest_keys_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "state" / "cache.json"
    for index in range(keyed_cache.KEEP + 2):
        keyed_cache.store(path, f"k{index}", {"n": index})
    keyed_cache.store(path, "k2", {"n": 2})  # refreshed: now the newest
    keyed_cache.store(path, "k99", {"n": 99})
    kept = [f"k{i}" for i in range(100) if keyed_cache.load(path, f"k{i}") is not None]
    assert kept == ["k2", *[f"k{i}" for i in range(4, keyed_cache.KEEP + 2)], "k99"]
    assert keyed_cache.load(path, "k2") == {"n": 2}


def test_an_unreadable_or_foreign_file_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    path.write_text("{not json")
    assert keyed_cache.load(path, "k") is None
    keyed_cache.store(path, "k", {"a": 1})
    assert keyed_cache.load(path, "k") == {"a": 1}
    path.write_text('["a list"]')
    assert keyed_cache.load(path, "k") is None
    path.write_text('{"key": "k", "capability": {"old": "format"}}')
    assert keyed_cache.load(path, "k") is None
