"""Hard links: a second name for a file from outside, or for `.env`, is not a way in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_server.fs import hardlinks
from lsp_server.runtime.dispatch import Runtime
from tests.helpers import call_tool, make_runtime, text_of


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path, Runtime]:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "private.txt").write_text("OUTSIDE-PRIVATE\n")
    os.link(outside / "private.txt", root / "innocent.txt")
    (root / ".env").write_text("API_KEY=SECRET-KEY\n")
    os.link(root / ".env", root / "notes.txt")
    (root / "sub").mkdir()
    (root / "a.txt").write_text("shared inside\n")
    os.link(root / "a.txt", root / "sub" / "b.txt")
    return root, outside, make_runtime(root)


async def test_a_link_to_an_outside_file_is_not_read(linked: tuple[Path, Path, Runtime]) -> None:
    _, _, runtime = linked
    result = await call_tool(runtime, "read_file", {"path": "innocent.txt"})
    assert result.error is not None and result.error.code == "workspace.outside_scope"
    assert "OUTSIDE-PRIVATE" not in text_of(result)
    assert "hard link" in text_of(result) and "1 of its 2 names" in text_of(result)


async def test_a_link_to_a_secret_is_not_read(linked: tuple[Path, Path, Runtime]) -> None:
    _, _, runtime = linked
    result = await call_tool(runtime, "read_file", {"path": "notes.txt"})
    assert result.error is not None and result.error.code == "workspace.secret_file"
    assert "SECRET-KEY" not in text_of(result) and ".env" in text_of(result)


async def test_links_whose_names_are_all_inside_are_read_and_never_written_through(
    linked: tuple[Path, Path, Runtime],
) -> None:
    root, _, runtime = linked
    read = await call_tool(runtime, "read_file", {"path": "a.txt"})
    assert read.error is None and "shared inside" in text_of(read)
    written = await call_tool(runtime, "write_file", {"path": "a.txt", "content": "new\n"})
    assert written.error is None, text_of(written)
    assert (root / "a.txt").read_text() == "new\n"
    assert (root / "sub" / "b.txt").read_text() == "shared inside\n"  # the other name
    assert (root / "sub" / "b.txt").stat().st_nlink == 1


async def test_the_outside_file_is_never_written(linked: tuple[Path, Path, Runtime]) -> None:
    root, outside, runtime = linked
    for name, code in (
        ("innocent.txt", "workspace.outside_scope"),
        ("notes.txt", "workspace.secret_file"),
    ):
        result = await call_tool(runtime, "write_file", {"path": name, "content": "pwned\n"})
        assert result.error is not None and result.error.code == code
    edit = await call_tool(
        runtime,
        "edit_file",
        {"path": "innocent.txt", "old_string": "OUTSIDE", "new_string": "pwned"},
    )
    assert edit.error is not None
    assert (outside / "private.txt").read_text() == "OUTSIDE-PRIVATE\n"
    assert (root / ".env").read_text() == "API_KEY=SECRET-KEY\n"


def test_the_scan_gives_up_at_its_limit(linked: tuple[Path, Path, Runtime]) -> None:
    root, _, _ = linked
    st = (root / "a.txt").stat()
    assert hardlinks.names_of(root, st, limit=1) is None
    assert sorted(hardlinks.names_of(root, st) or []) == [root / "a.txt", root / "sub" / "b.txt"]
