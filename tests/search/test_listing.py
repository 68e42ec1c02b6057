"""glob and ls over a generated tree: ignore rules, hidden names, secrets, order."""

from __future__ import annotations

import os
from pathlib import Path

from lsp_server.search.listing import glob_files, list_entries, literal_prefix
from tests.search.conftest import SECRET_GLOBS, TREE


def rel(paths: list[Path], base: Path) -> list[str]:
    return [p.relative_to(base).as_posix() for p in paths]


def test_literal_prefix() -> None:
    assert literal_prefix("src/app/**/*.py") == ("src/app", "**/*.py")
    assert literal_prefix("*.py") == ("", "*.py")
    assert literal_prefix("{a,b}/x.py") == ("", "{a,b}/x.py")


def test_glob_recursion_braces_ignores_and_secrets(tree: Path) -> None:
    found = glob_files(
        tree, "**/*.{py,ts}", ignore_base=tree, excluded=SECRET_GLOBS, timeout_seconds=30
    )
    names = sorted(rel(found.paths, tree))
    assert names == ["src/app.py", "src/nested/deep.py", "src/util.py", "web/index.ts"]
    everything = glob_files(
        tree, "**/*", ignore_base=tree, excluded=SECRET_GLOBS, timeout_seconds=30
    )
    listed = rel(everything.paths, tree)
    for hidden in ("build/out.js", "debug.log", "src/nested/generated.py", ".hidden.txt"):
        assert hidden not in listed
    assert not [p for p in listed if p.startswith("secrets/") or p.endswith(".env")]
    assert "keep.log" in listed


def test_glob_newest_first(tree: Path) -> None:
    for age, name in enumerate(["src/util.py", "src/app.py", "src/nested/deep.py"]):
        os.utime(tree / name, (1_000_000 - age * 1000, 1_000_000 - age * 1000))
    found = glob_files(tree, "src/**/*.py", ignore_base=tree, excluded=(), timeout_seconds=30)
    assert rel(found.paths, tree) == ["src/util.py", "src/app.py", "src/nested/deep.py"]


def test_glob_dot_names_only_when_spelled(tree: Path) -> None:
    found = glob_files(
        tree, ".config/*.txt", ignore_base=tree, excluded=SECRET_GLOBS, timeout_seconds=30
    )
    assert rel(found.paths, tree) == [".config/settings.txt"]
    assert (
        glob_files(tree, ".env", ignore_base=tree, excluded=SECRET_GLOBS, timeout_seconds=30).paths
        == []
    )


def row(name: str) -> str:
    content = TREE[name]
    size = len(content if isinstance(content, bytes) else content.encode())
    return f"{name}\t{size}"


def test_ls_rows_depth_and_rules(tree: Path) -> None:
    (tree / ".git").mkdir()
    (tree / "node_modules" / "x").mkdir(parents=True)
    rows = [e.row() for e in list_entries(tree, depth=1, ignore_base=tree, excluded=SECRET_GLOBS)]
    assert rows[:3] == [".config/", row(".gitignore"), row(".hidden.txt")]
    assert "src/" in rows and row("README.md") in rows
    for absent in (".git/", "node_modules/", "build/", "debug.log\t10", ".env\t8", "src/app.py"):
        assert not [r for r in rows if r.startswith(absent.split("\t")[0])], absent
    deep = [e.row() for e in list_entries(tree, depth=3, ignore_base=tree, excluded=SECRET_GLOBS)]
    assert row("src/nested/deep.py") in deep
    assert "src/nested/generated.py" not in "\n".join(deep)
    assert not [r for r in deep if r.startswith("secrets/") and r != "secrets/"]
    assert deep.index("src/") < deep.index(row("src/app.py")) < deep.index("src/nested/")


def test_glob_accepts_a_leading_dot_slash(tree: Path) -> None:
    found = glob_files(tree, "./web/*.ts", ignore_base=tree, excluded=(), timeout_seconds=30)
    assert rel(found.paths, tree) == ["web/index.ts"]
