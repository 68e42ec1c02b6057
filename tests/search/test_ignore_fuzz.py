"""Property: for random trees and random .gitignore files (root and nested), with or
without an include glob, the Python walker selects exactly the files ripgrep selects."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_server.search.engines import SearchEngines
from lsp_server.search.query import SearchQuery
from lsp_server.search.render import render

FOLDERS = ["", "a", "b", "a/b", "b/a", "c/d", ".hid", "a/.hid"]
NAMES = ["x.txt", "y.py", "z.log", ".h", "d"]
RULES = [
    "*.txt", "!x.txt", "a/", "/b", "**/a", "a/**", "b/*.py", "*.log", "!*.log", "c/",
    "!c/d/", "d", "/a/b", "x*", "[xy].py", "#comment", "", "y.py ", "!/a/b/x.txt",
    "**/b/**", "*", "!*.py", ".h", "!.h",
]  # fmt: skip
INCLUDES = [None, None, "*.py", "!*.txt", "a/**", "*.{py,log}", ".h", "**/d"]

trees = st.lists(
    st.tuples(st.sampled_from(FOLDERS), st.sampled_from(NAMES)), min_size=1, max_size=10
)
ignore_files = st.dictionaries(
    st.sampled_from(["", "a", "b", "a/b", "c"]),
    st.lists(st.sampled_from(RULES), min_size=1, max_size=4),
    max_size=3,
)


def selected(root: Path, rg: Path, engine: str, include: str | None) -> str:
    query = SearchQuery(
        ".", target=root, ignore_base=root, include=include, mode="files_with_matches"
    )
    outcome = asyncio.run(SearchEngines(rg).search(query, engine))  # type: ignore[arg-type]
    return render(
        outcome,
        mode="files_with_matches",
        max_results=10_000,
        context=0,
        display=lambda rel: rel,
        timeout_seconds=30,
    )


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tree=trees, ignores=ignore_files, include=st.sampled_from(INCLUDES))
def test_walker_selects_like_ripgrep(
    rg_path: Path,
    tree: list[tuple[str, str]],
    ignores: dict[str, list[str]],
    include: str | None,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for parent, name in tree:
            path = root / parent / name
            if any(p.is_file() for p in [path, *path.parents] if p != root and p.exists()):
                continue  # a file already holds this name
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_text("1\n")
        for parent, rules in ignores.items():
            target = root / parent
            if target.exists() and not target.is_dir():
                continue
            target.mkdir(parents=True, exist_ok=True)
            (target / ".gitignore").write_text("\n".join(rules) + "\n")
        expected = selected(root, rg_path, "ripgrep", include)
        assert selected(root, rg_path, "python", include) == expected
