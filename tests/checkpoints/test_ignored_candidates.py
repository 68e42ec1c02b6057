"""The ignored files among the names a command made (shadow/ignored.py): found without
reading the shadow index where `git check-ignore` can tell (a 200,000-file index takes git
0.1 s to read), and found at all two folders deep in an ignored folder (where `git ls-files
--others --ignored --directory` fails: git's "directory entry not superset of prefix")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints.records import CheckpointStore
from lsp_server.checkpoints.shadow.ignored import ignored_candidates
from lsp_server.checkpoints.shadow.repository import ShadowRepo


@pytest.fixture
def repo(tmp_path: Path) -> ShadowRepo:
    root = tmp_path / "root"
    (root / "out" / "deep").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "nested" / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("*.log\nout/\n!keep.log\n")
    for name in ("src/a.py", "a.log", "keep.log", "out/deep/x.o", "nested/n.log"):
        (root / name).write_text("x\n")
    (root / "fresh" / "sub").mkdir(parents=True)
    (root / "fresh" / "sub" / "inner.log").write_text("made with its folder\n")
    (root / "fresh" / "kept.py").write_text("not ignored\n")
    store = CheckpointStore(tmp_path / "state", root, 1024 * 1024)
    store.ensure()
    store.repo.snapshot()
    return store.repo


def index_readers(repo: ShadowRepo, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The git commands of `repo` that read its index (ls-files), as they run."""
    ran: list[tuple[str, ...]] = []
    run = repo.git.run

    def recorded(*args: str, **kwargs: Any) -> bytes:
        if "ls-files" in args:
            ran.append(args)
        return run(*args, **kwargs)

    monkeypatch.setattr(repo.git, "run", recorded)
    return ran


@pytest.mark.parametrize(
    ("made", "found"),
    [
        (["src/a.py", "keep.log"], []),  # no rule matches them (keep.log: re-included)
        (["a.log", "src/a.py"], ["a.log"]),
        (["out/deep/x.o"], ["out/deep/x.o"]),  # two folders deep in an ignored one
        (["out/deep"], ["out/deep/x.o"]),  # an ignored folder: what it holds
        (["nested/n.log"], ["nested/n.log"]),
    ],
)
def test_made_names_an_ignore_rule_matches_are_found_without_reading_the_index(
    repo: ShadowRepo, monkeypatch: pytest.MonkeyPatch, made: list[str], found: list[str]
) -> None:
    ran = index_readers(repo, monkeypatch)
    assert ignored_candidates(repo, frozenset(), made) == found
    assert ran == []


def test_a_made_folder_no_rule_matches_is_looked_into_by_git(
    repo: ShadowRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file below it may be ignored while the folder is not."""
    ran = index_readers(repo, monkeypatch)
    assert ignored_candidates(repo, frozenset(), ["fresh"]) == ["fresh/sub/inner.log"]
    assert len(ran) == 1


def test_names_git_check_ignore_cannot_read_go_to_ls_files(
    repo: ShadowRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check-ignore refuses a name beyond a symbolic link: ls-files decides, as before."""
    (repo.work_tree / "real").mkdir()
    (repo.work_tree / "real" / "y.log").write_text("y\n")
    (repo.work_tree / "link").symlink_to("real")
    ran = index_readers(repo, monkeypatch)
    assert ignored_candidates(repo, frozenset(), ["link/y.log", "a.log"]) == ["a.log"]
    assert len(ran) == 1
