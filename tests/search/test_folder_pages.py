"""ls of a folder of any size: the page is what the full listing starts with, the total
counts every kept entry, and a folder far larger than the page is listed from one pass."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from lsp_server.search.folder_pages import list_folder
from lsp_server.search.listing import list_entries
from tests.search.conftest import SECRET_GLOBS


def rows_of(folder: Path, depth: int, limit: int) -> tuple[list[str], int]:
    page = list_folder(
        folder, depth=depth, ignore_base=folder, excluded=SECRET_GLOBS, limit=limit,
        timeout_seconds=30,
    )  # fmt: skip
    assert not page.timed_out
    return [entry.row() for entry in page.entries], page.total


@pytest.mark.parametrize("depth", [1, 2, 3, 20])
@pytest.mark.parametrize("limit", [1, 3, 7, 5000])
def test_the_page_is_the_start_of_the_full_listing(tree: Path, depth: int, limit: int) -> None:
    (tree / ".git").mkdir()
    (tree / "node_modules" / "x").mkdir(parents=True)
    (tree / "link").symlink_to(tree / "src")
    everything = [
        e.row() for e in list_entries(tree, depth=depth, ignore_base=tree, excluded=SECRET_GLOBS)
    ]
    rows, total = rows_of(tree, depth, limit)
    assert rows == everything[:limit]
    assert total == len(everything)
    for offset in (1, 2, 5, 11):
        later = list_folder(
            tree, depth=depth, ignore_base=tree, excluded=SECRET_GLOBS, limit=limit,
            timeout_seconds=30, offset=offset,
        )  # fmt: skip
        assert [e.row() for e in later.entries] == everything[offset : offset + limit]
        assert later.total == len(everything)


def test_a_folder_much_larger_than_the_page(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    names = [f"f{n:05}.txt" for n in range(20_000)]
    for name in reversed(names):
        (folder / name).write_text("x")
    (folder / ".gitignore").write_text("*.log\n")
    for n in range(500):
        (folder / f"a{n}.log").write_text("ignored")
    tracemalloc.start()
    try:
        page = list_folder(
            folder, depth=1, ignore_base=folder, excluded=SECRET_GLOBS, limit=100,
            timeout_seconds=30,
        )  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [e.relative for e in page.entries] == [".gitignore", *names[:99]]
    assert page.entries[1].row() == "f00000.txt\t1"
    assert page.total == 20_001
    # The page and a heap of its size, not 20,000 entries held (each ~300 bytes).
    assert peak < 2_000_000


def test_a_stopped_listing_keeps_what_it_saw(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    for n in range(30):
        (folder / f"d{n:02}").mkdir(parents=True)
        (folder / f"d{n:02}" / "f").write_text("")
    page = list_folder(
        folder, depth=3, ignore_base=folder, excluded=(), limit=5000, timeout_seconds=1e-9
    )
    assert page.timed_out
    assert page.total == len(page.entries) < 60


@pytest.mark.parametrize("limit", [1, 50, 2500, 5000])
def test_a_folder_of_many_chunks_gives_the_full_listings_page(tmp_path: Path, limit: int) -> None:
    """Entries are looked at a chunk at a time (the deny list's texts searched in a
    chunk's names at once) and the page kept as the smallest names seen so far: the page
    and the total are still the full listing's, with secrets in any chunk left out."""
    folder = tmp_path / "big"
    folder.mkdir()
    names = [f"f{n * 7919 % 4001:05}.txt" for n in range(4001)]  # not in name order
    secrets = {"a.pem", "m.key", "id_rsa_old", "id_ed25519", ".env"}
    ignored = {"x.tmp", "f03999.txt"}  # by the folder's .gitignore; keep.tmp re-included
    for name in [*names[:1500], *secrets, *ignored, "keep.tmp", *names[1500:]]:
        (folder / name).write_text("")
    (folder / ".gitignore").write_text("f03999.txt\n*.tmp\n!keep.tmp\n")
    (folder / "sub").mkdir()
    rows, total = rows_of(folder, 1, limit)
    full = sorted({*names, "sub", "keep.tmp", ".gitignore"} - ignored)
    assert total == len(full)
    assert [row.split("\t")[0].rstrip("/") for row in rows] == full[:limit]
    later = list_folder(
        folder, depth=1, ignore_base=folder, excluded=SECRET_GLOBS, limit=limit,
        timeout_seconds=30, offset=1000,
    )  # fmt: skip
    assert [entry.relative for entry in later.entries] == full[1000 : 1000 + limit]
