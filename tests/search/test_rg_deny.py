"""grep on rg leaves the secret deny list out of rg's arguments (rg tests every `!` glob
against every path it meets) and drops the result files it names instead: the same
answer, in every output mode, for a subfolder, and with an include glob that lets rg
into hidden files."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lsp_server.search import ripgrep
from lsp_server.search.engines import SearchEngines
from lsp_server.search.query import OutputMode, SearchQuery
from tests.search.conftest import SECRET_GLOBS

FILES = {
    "a.txt": "needle\n",
    "sub/b.txt": "needle\n",
    "sub/server.pem": "needle\n",
    "sub/.env": "NEEDLE=needle\n",
    "sub/keys/id_rsa": "needle\n",
    "sub/x.key/inner.txt": "needle in a folder the list names\n",
    ".aws/credentials": "needle\n",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
@pytest.mark.parametrize("include", [None, "*", "**/.*"])
@pytest.mark.parametrize("folder", ["", "sub"])
def test_secret_files_are_dropped_without_rg_globs(
    root: Path, rg_path: Path, mode: OutputMode, include: str | None, folder: str
) -> None:
    target = root / folder if folder else root
    query = SearchQuery(
        "needle", target=target, ignore_base=root, mode=mode, include=include,
        excluded=SECRET_GLOBS,
    )  # fmt: skip
    outcome = asyncio.run(SearchEngines(rg_path).search(query))
    with_globs = asyncio.run(ripgrep.search(rg_path, query))  # the deny list as rg globs
    assert outcome.files == with_globs.files
    found = {hits.path.rsplit("/", 1)[-1] for hits in outcome.files}
    assert found <= {"a.txt", "b.txt"}
    assert ("b.txt" in found) == (include != "**/.*")


def test_the_engines_give_rg_no_deny_glob(root: Path, rg_path: Path) -> None:
    query = SearchQuery("needle", target=root, ignore_base=root, excluded=SECRET_GLOBS)
    assert not any(
        a.startswith("--glob=!") for a in ripgrep.command(rg_path, query, ".", deny_globs=False)
    )
    assert any(a.startswith("--glob=!") for a in ripgrep.command(rg_path, query, "."))
