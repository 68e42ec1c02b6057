"""glob on ripgrep gives the Python walker's answer, path for path and in the same order:
ignore files at every depth, hidden names, the folders glob never enters, the secret deny
list, symbolic links, odd file kinds, case; and a run stopped by its time limit keeps
what it found."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_server.search.listing import glob_files
from lsp_server.search.rg_files import rg_command, rules_above
from tests.search.conftest import SECRET_GLOBS

PATTERNS = [
    "**/*",
    "**/*.py",
    "**/*.{py,ts}",
    "*.txt",
    "*",
    "src/*.py",
    "src/**/*.py",
    "src/**",
    "**/nested/*",
    "**/*.GO",
    "**/*.go",
    "docs/*/*.txt",
    "docs/sub dir/*",
    "**/[a-m]*.py",
    "**/test_?.py",
    ".config/*.txt",
    ".*",
    "**/.*",
    "**/.h/*.go",
    "node_modules/**/*.js",
    "**/node_modules/**",
    "vendor/**",
    "**/*.log",
    "**/*.pem",
    "lib/*.{c,h}",
    "**/*[.]py",
    "**/*.txt",
    ".shown/*",
    "**/x.go",
]


@pytest.fixture
def wide(tree: Path) -> Path:
    """The search tree plus what trips a lister up."""
    files = {
        "src/test_a.py": "a",
        "src/b.go": "b",
        "src/c.GO": "c",
        "a/.h/z.go": "z",
        ".top.go": "t",
        "node_modules/pkg/index.js": "n",
        "sub/node_modules/x.js": "n",
        "__pycache__/m.pyc": "p",
        "notes/node_modules": "a file of that name: listed",
        "vendor/.ignore": "*.tmp\n",
        "vendor/keep.c": "k",
        "vendor/drop.tmp": "d",
        "vendor/deeper/.rgignore": "!drop.tmp\n",
        "vendor/deeper/drop.tmp": "d",
        "lib/x.c": "x",
        "lib/x.h": "h",
        "lib/.rgignore": "x.h\n",
        "ex/excluded.txt": "e",
        "ex/kept.txt": "k",
        ".shown/inner.txt": "a hidden folder a `!` line re-includes",
        ".shown/x.go": "x",
        "weird.pem/inner.txt": "a folder the deny list names",
        "deep/.ssh/known.txt": "a hidden secret folder",
    }
    for rel, text in files.items():
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    with (tree / ".gitignore").open("a") as gitignore:
        gitignore.write("!.shown/\n")
    (tree / ".git" / "info").mkdir(parents=True)
    (tree / ".git" / "info" / "exclude").write_text("ex/excluded.txt\n")
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tree / "link.py").symlink_to(tree / "src" / "app.py")
    (tree / "linked_dir").symlink_to(tree / "src")
    os.mkfifo(tree / "pipe.py")
    for age, path in enumerate(sorted(tree.rglob("*"))):
        if not path.is_symlink() and path.is_file():
            os.utime(path, ns=(10**18 - (age % 7) * 10**9,) * 2)  # ties, broken by path
    return tree


@pytest.mark.parametrize("pattern", PATTERNS)
def test_ripgrep_lists_what_the_walker_lists(wide: Path, rg_path: Path, pattern: str) -> None:
    for excluded in ((), SECRET_GLOBS):
        walked = glob_files(wide, pattern, ignore_base=wide, excluded=excluded, timeout_seconds=30)
        listed = glob_files(
            wide, pattern, ignore_base=wide, excluded=excluded, timeout_seconds=30, rg=rg_path
        )
        assert listed.paths == walked.paths, (pattern, excluded)
        assert listed.count == len(walked.paths)
        assert not listed.timed_out


def test_a_subfolder_and_a_limit(wide: Path, rg_path: Path) -> None:
    src = wide / "src"
    walked = glob_files(src, "**/*.py", ignore_base=wide, excluded=(), timeout_seconds=30)
    listed = glob_files(
        src, "**/*.py", ignore_base=wide, excluded=(), timeout_seconds=30, rg=rg_path, limit=2
    )
    assert listed.paths == walked.paths[:2]
    assert listed.count == len(walked.paths) > 2
    kept = glob_files(
        wide, "**/*.py", ignore_base=wide, excluded=(), timeout_seconds=30, rg=rg_path,
        keep=lambda path: path.name != "app.py",
    )  # fmt: skip
    assert [p.name for p in kept.paths if p.name == "app.py"] == []
    assert kept.count == len(kept.paths)


def test_the_name_glob_narrows_rg_only_where_it_reads_the_same(rg_path: Path) -> None:
    def typed(rest: str) -> bool:
        command = rg_command(rg_path, rest, hidden=False, skip_dirs=())
        return any(arg.startswith("--type-add") for arg in command)

    assert typed("**/*.go") and typed("src/*.{ts,tsx}") and typed("*")
    assert not typed("**/[a-m]*.py") and not typed("**") and not typed("a/")


def test_a_stopped_listing_keeps_what_it_found(tmp_path: Path, rg_path: Path) -> None:
    root = tmp_path / "ws"
    for folder in range(40):
        (root / f"d{folder}").mkdir(parents=True)
        for n in range(50):
            (root / f"d{folder}" / f"f{n}.txt").write_text("")
    stopped = glob_files(
        root, "**/*.txt", ignore_base=root, excluded=(), timeout_seconds=1e-6, rg=rg_path
    )
    assert stopped.timed_out
    assert stopped.count == len(stopped.paths) < 2000


def test_a_listing_of_many_batches_keeps_the_walkers_answer(tmp_path: Path, rg_path: Path) -> None:
    """rg's output is read while it runs, in batches, and each batch is tested in bulk
    (no hidden name, no text of the deny list in it): hidden files, secrets and a folder
    the deny list names that arrive in any batch are still left out, and the order is
    the walker's (newest first, ties in path order)."""
    root = tmp_path / "ws"
    long = "n" * 60  # ~1,000 files a 64 KiB batch
    for folder in range(12):
        for n in range(300):
            path = root / f"d{folder:02}" / f"{long}{n:03}.go"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")
            os.utime(path, ns=(10**18 - (n % 5) * 10**9,) * 2)
    for rel in ("d07/.hidden.go", "d07/.h/x.go", "d09/id_rsa.go", "d09/x.pem/inner.go",
                "d11/sub/.env.go", "a.key.go"):  # fmt: skip
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    for pattern in ("**/*.go", "d0*/**/*.go"):
        for limit in (50, None):
            walked = glob_files(root, pattern, ignore_base=root, excluded=SECRET_GLOBS,
                                timeout_seconds=30, limit=limit)  # fmt: skip
            listed = glob_files(root, pattern, ignore_base=root, excluded=SECRET_GLOBS,
                                timeout_seconds=30, rg=rg_path, limit=limit)  # fmt: skip
            assert listed.paths == walked.paths, (pattern, limit)
            assert listed.count == walked.count
    every = glob_files(root, "**/*.go", ignore_base=root, excluded=SECRET_GLOBS,
                       timeout_seconds=30, rg=rg_path).paths  # fmt: skip
    assert len(every) == 3600 + 1  # the files and a.key.go: no hidden name, no secret
    names = {path.name for path in every}
    assert {"id_rsa.go", "inner.go", ".hidden.go", "x.go", ".env.go"}.isdisjoint(names)


def test_a_stopped_listing_says_so_and_a_finished_one_does_not(
    tmp_path: Path, rg_path: Path
) -> None:
    root = tmp_path / "ws"
    for n in range(30):
        (root / f"d{n}").mkdir(parents=True)
        (root / f"d{n}" / "f.txt").write_text("")
    done = glob_files(root, "**/*.txt", ignore_base=root, excluded=(), timeout_seconds=30,
                      rg=rg_path)  # fmt: skip
    assert not done.timed_out and done.count == 30
    stopped = glob_files(root, "**/*.txt", ignore_base=root, excluded=(),
                         timeout_seconds=1e-9, rg=rg_path)  # fmt: skip
    assert stopped.timed_out and stopped.count == len(stopped.paths) < 30


def test_rg_reads_the_folders_above_only_when_one_holds_a_rule(
    tmp_path: Path, rg_path: Path
) -> None:
    """With no ignore rule above the listed folder, rg is told not to look there (it then
    spares the match of every path against their empty rules); a rule above still applies
    as before: a .gitignore between the root and a pattern's literal folder, a .ignore or
    a .git's exclude lines above the root."""
    outer = tmp_path / "outer"
    root = outer / "ws"
    for rel in ("a.go", "b.skip", "src/c.go", "src/d.gen.go", "src/e.skip"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / ".gitignore").write_text("*.gen.go\n")

    def above(folder: Path) -> bool:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            return rules_above(fd)
        finally:
            os.close(fd)

    def names(start: Path, pattern: str) -> list[str]:
        found = glob_files(start, pattern, ignore_base=root, excluded=(), timeout_seconds=30,
                           rg=rg_path)  # fmt: skip
        walked = glob_files(start, pattern, ignore_base=root, excluded=(), timeout_seconds=30)
        assert found.paths == walked.paths
        return sorted(path.name for path in found.paths)

    assert not above(root) and above(root / "src")
    assert "--no-ignore-parent" in rg_command(rg_path, "**", hidden=False, skip_dirs=(),
                                              parents=False)  # fmt: skip
    assert names(root, "**/*.go") == ["a.go", "c.go"]
    assert names(root / "src", "**/*.go") == ["c.go"]
    (outer / ".git" / "info").mkdir(parents=True)
    (outer / ".git" / "info" / "exclude").write_text("# git's own comments only\n\n")
    assert not above(root)
    (outer / ".git" / "info" / "exclude").write_text("# a rule\n*.skip\n")
    assert above(root)
    listed = glob_files(root, "**/*", ignore_base=root, excluded=(), timeout_seconds=30,
                        rg=rg_path)  # fmt: skip
    assert "b.skip" not in {path.name for path in listed.paths}
    (outer / ".git" / "info" / "exclude").unlink()
    (outer / ".ignore").write_text("*.skip\n")
    assert above(root)
    (outer / ".ignore").unlink()
    (outer / ".git").rename(outer / "git-dir")
    (outer / ".git").write_text("gitdir: git-dir\n")  # a worktree's: exclude lies elsewhere
    assert above(root)
