"""The user's index read in-process (shadow/index_summary.py): the same files, sizes and
flags as git's own listing, in index versions 2, 3 and 4; a split index is left to git."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from lsp_server.checkpoints.shadow import index_summary, seed
from lsp_server.checkpoints.shadow.index_summary import read_summary


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=u", "-c", "user.email=u@x", *args],
        cwd=root, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout


LONG = "/".join(["d" * 200] * 24 + [".gitattributes"])


def make(root: Path) -> int:
    """A repository of files with long, shared and non-ASCII names; their total size."""
    total = 0
    for n in range(120):
        path = root / f"pkg{n % 5}" / ("deep/" * (n % 4)) / f"名前-{n}-{'x' * (n % 90)}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("y" * n)
        total += n
    # Names that only end like the attributes file.
    for path in (root / "not.gitattributes", root / "pkg2" / ".gitattributes.bak" / "x"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("z")
        total += 1
    (root / ".gitattributes").write_text("*.txt text\n")
    (root / "pkg1" / ".gitattributes").write_text("*.bin binary\n")
    total += len("*.txt text\n") + len("*.bin binary\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    # A path longer than an index entry's name length can say (4,095 bytes and more: read
    # up to its NUL); no file (the system's paths are shorter), no stat data: size 0.
    blob = git(root, "hash-object", "-w", "not.gitattributes").strip()
    git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{LONG}")
    return total


def test_versions_2_3_and_4_read_as_git_lists_them(tmp_path: Path) -> None:
    total = make(tmp_path)
    index = tmp_path / ".git" / "index"
    folders = {""} | {
        "/".join(p.split("/")[:n])
        for p in git(tmp_path, "ls-files", "-z").split("\0")
        if p
        for n in range(1, p.count("/") + 1)
    }
    for version in ("2", "4"):
        git(tmp_path, "update-index", "--index-version", version)
        summary = read_summary(index)
        assert summary is not None
        assert (summary.files, summary.bytes, summary.folders) == (125, total, len(folders))
        assert sorted(summary.attributes) == [
            ".gitattributes",
            LONG,
            "pkg1/.gitattributes",
        ]
        assert not summary.flagged and not summary.unmerged
    git(tmp_path, "update-index", "--skip-worktree", "pkg0/名前-0-.txt")  # version 3
    summary = read_summary(index)
    assert summary is not None and summary.flagged and summary.files == 125
    git(tmp_path, "update-index", "--no-skip-worktree", "pkg0/名前-0-.txt")
    git(tmp_path, "update-index", "--assume-unchanged", "pkg0/名前-0-.txt")
    summary = read_summary(index)
    assert summary is not None and summary.flagged
    git(tmp_path, "update-index", "--split-index")
    assert read_summary(index) is None
    assert read_summary(tmp_path / "missing") is None


def test_submodules_are_named(tmp_path: Path) -> None:
    """A submodule is one entry of the index (a gitlink): its folder is watched, not
    entered (watching/tree_walk.py), so the summary names it, in every version."""
    make(tmp_path)
    for path in ("vendor/lib", "sub"):
        git(tmp_path, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{path}")
    for version in ("2", "4"):
        git(tmp_path, "update-index", "--index-version", version)
        summary = read_summary(tmp_path / ".git" / "index")
        assert summary is not None
        assert sorted(summary.gitlinks) == ["sub", "vendor/lib"]
        assert "vendor" in summary.tracked_folders and "vendor/lib" not in summary.tracked_folders


def test_an_unmerged_path_counts_once(tmp_path: Path) -> None:
    make(tmp_path)
    git(tmp_path, "commit", "-q", "-m", "one")
    git(tmp_path, "checkout", "-q", "-b", "other")
    (tmp_path / "pkg0" / "名前-0-.txt").write_text("other\n")
    git(tmp_path, "commit", "-q", "-am", "other")
    git(tmp_path, "checkout", "-q", "-")
    (tmp_path / "pkg0" / "名前-0-.txt").write_text("mine\n")
    git(tmp_path, "commit", "-q", "-am", "mine")
    subprocess.run(["git", "merge", "-q", "other"], cwd=tmp_path, capture_output=True)
    summary = read_summary(tmp_path / ".git" / "index")
    assert summary is not None and summary.unmerged and summary.files == 125


def test_a_walk_never_starts_from_a_summary_whose_paths_were_let_go(tmp_path: Path) -> None:
    """After the first walk lets the paths go (lighten_summary), a second one (another
    engine on the same repository) reads them again instead of walking with none, which
    would take every untracked and ignored file for new."""
    root = tmp_path / "repo"
    make(root)
    user = root / ".git"
    assert seed.user_index_summary(user) is not None
    seed.lighten_summary(user)
    light = seed.user_index_summary(user)
    assert light is not None and light.files == 125 and not light.tracked
    whole = seed.user_index_summary(user, whole=True)
    assert whole is not None and len(whole.tracked) == 125 and "" in whole.tracked_folders


def test_an_index_written_to_use_up_memory_is_given_up(tmp_path: Path) -> None:
    """Whoever can write .git/index (a shell command can) chooses what the server reads: a
    v4 index whose every name repeats the previous one whole plus a letter would spell
    names of 40,000 entries' square (800 MB from 2.6 MB); it is given up within a bound."""
    entry = bytes(62) + b"\x00" + b"a\x00"  # stat data, id, flags; strip 0, suffix "a"
    count = 40_000
    index = tmp_path / "index"
    index.write_bytes(struct.pack(">4sII", b"DIRC", 4, count) + entry * count + bytes(20))
    assert read_summary(index) is None


def test_an_index_over_the_size_bound_is_left_to_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(tmp_path)
    index = tmp_path / ".git" / "index"
    assert read_summary(index) is not None
    monkeypatch.setattr(index_summary, "MAX_INDEX_BYTES", index.stat().st_size - 1)
    assert read_summary(index) is None
