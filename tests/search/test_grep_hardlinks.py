"""grep applies read_file's hard-link rule (issue 27): a hard link inside the workspace to
a file from outside (or to a secret) shows nothing of its content, whether grep searches
the whole workspace or is given the link as `path`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_server.runtime.dispatch import Runtime
from tests.helpers import call_tool, make_runtime, text_of


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Runtime]:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "private.txt").write_text("needle OUTSIDE-PRIVATE\n")
    os.link(outside / "private.txt", root / "innocent.txt")
    (root / ".env").write_text("needle SECRET-KEY\n")
    os.link(root / ".env", root / "notes.txt")
    (root / "a.txt").write_text("needle shared inside\n")
    os.link(root / "a.txt", root / "b.txt")
    (root / "plain.txt").write_text("needle plain\n")
    return root, make_runtime(root)


@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
async def test_whole_workspace_grep_shows_no_linked_outside_or_secret(
    linked: tuple[Path, Runtime], mode: str
) -> None:
    _, runtime = linked
    result = await call_tool(runtime, "grep", {"pattern": "needle", "output_mode": mode})
    text = text_of(result)
    assert result.error is None, text
    assert "OUTSIDE-PRIVATE" not in text and "SECRET-KEY" not in text
    assert "innocent.txt" not in text and "notes.txt" not in text
    assert "plain.txt" in text and "a.txt" in text and "b.txt" in text  # links all inside


async def test_grep_of_a_link_to_an_outside_file_is_refused(
    linked: tuple[Path, Runtime],
) -> None:
    _, runtime = linked
    result = await call_tool(runtime, "grep", {"pattern": "needle", "path": "innocent.txt"})
    assert result.error is not None and result.error.code == "workspace.outside_scope"
    assert "OUTSIDE-PRIVATE" not in text_of(result)


async def test_grep_of_a_link_to_a_secret_is_refused(linked: tuple[Path, Runtime]) -> None:
    _, runtime = linked
    result = await call_tool(runtime, "grep", {"pattern": "needle", "path": "notes.txt"})
    assert result.error is not None and result.error.code == "workspace.secret_file"
    assert "SECRET-KEY" not in text_of(result)


async def test_links_deeper_in_a_searched_folder_are_left_out(
    linked: tuple[Path, Runtime],
) -> None:
    # The screen looks at each result from the folder searched ("src"), by a relative
    # path that may cross folders ("deep/er/leak.txt").
    root, runtime = linked
    deep = root / "src" / "deep" / "er"
    deep.mkdir(parents=True)
    os.link(root / "innocent.txt", deep / "leak.txt")
    (deep / "fine.txt").write_text("needle fine\n")
    result = await call_tool(runtime, "grep", {"pattern": "needle", "path": "src"})
    text = text_of(result)
    assert "OUTSIDE-PRIVATE" not in text and "leak.txt" not in text
    assert "src/deep/er/fine.txt:1:needle fine" in text
    assert "1 hard-linked file(s) left out" in text
