"""The isolated session's worktree (tools/session/worktree.py) with real git: made from the
live tree, its changes since the base, the three-way merge and the next base."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lsp_server.tools.session import worktree


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "top.txt").write_text("top\n")
    (root / "pkg" / "mod.txt").write_text("a\nb\nc\n")
    (root / "pkg" / "tool.sh").write_text("#!/bin/sh\n")
    (root / "pkg" / "tool.sh").chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


def test_made_from_a_subfolder_holds_the_live_tree(repo: Path, tmp_path: Path) -> None:
    (repo / "pkg" / "mod.txt").write_text("a\nB live\nc\n")
    (repo / "pkg" / "new.txt").write_text("untracked\n")
    state = tmp_path / "state"
    made = worktree.create(repo / "pkg", state)
    assert made.root == made.top / "pkg"
    assert (made.root / "mod.txt").read_text() == "a\nB live\nc\n"
    assert (made.root / "new.txt").read_text() == "untracked\n"
    assert (made.root / "tool.sh").stat().st_mode & 0o111  # the mode came along
    assert worktree.find(made.root, state) == made
    assert worktree.find(repo / "pkg", state) is None  # the source is not isolated
    # Nothing in the user's index or refs changed.
    assert git(repo, "status", "--porcelain") == " M pkg/mod.txt\n?? pkg/new.txt\n"
    assert worktree.trees_folder(state) in made.top.parents  # beside the state, not in it

    (made.root / "mod.txt").write_text("a\nB live\nc\nd\n")
    (made.root / "new.txt").unlink()
    now = worktree.tree_of(made.top, made.gitdir)
    found = {change.rel: change for change in worktree.changes(made, now)}
    assert set(found) == {"pkg/mod.txt", "pkg/new.txt"}
    assert found["pkg/new.txt"].mine is None and found["pkg/new.txt"].base == b"untracked\n"
    # The next base keeps a path left out as it was, so it comes again.
    rebased = worktree.rebased(made, now, ["pkg/new.txt"])
    again = worktree.changes(made._replace(base=rebased), now)
    assert [change.rel for change in again] == ["pkg/new.txt"]


def test_outside_a_repository_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(worktree.IsolationError, match="not in a git repository"):
        worktree.create(plain, tmp_path / "state")


@pytest.mark.parametrize(
    ("base", "mine", "theirs", "expected"),
    [
        (b"a\nb\nc\n", b"a\nB\nc\n", b"a\nb\nc\n", b"a\nB\nc\n"),  # only mine
        (b"a\nb\nc\n", b"a\nb\nc\n", b"A\nb\nc\n", b"A\nb\nc\n"),  # only theirs
        (b"a\nb\nc\nd\n", b"a\nb\nc\nD\n", b"A\nb\nc\nd\n", b"A\nb\nc\nD\n"),  # both merge
        (b"a\nb\nc\n", b"a\nMINE\nc\n", b"a\nTHEIRS\nc\n", False),  # overlap
        (b"a\n", None, b"changed\n", False),  # deleted here, changed there
        (None, b"new\n", b"other\n", False),  # added on both sides
        (None, b"new\n", None, b"new\n"),  # added here
        (b"a\n", None, b"a\n", None),  # deleted here
        (b"\xffa", b"\xffb", b"\xffc", False),  # not text, changed on both sides
    ],
)
def test_merged(
    base: bytes | None, mine: bytes | None, theirs: bytes | None, expected: object
) -> None:
    assert worktree.merged(base, mine, theirs) == expected
