"""The line-level three-way merge a revert falls back to when git merge-file calls changes on
neighbouring lines a conflict."""

from __future__ import annotations

from lsp_server.core.diffs import merge_lines


def test_changes_on_neighbouring_lines_merge() -> None:
    # A revert of b's change (after -> before) while c's neighbour line changed since.
    assert merge_lines("a\nB\nC\n", "a\nB\nc\n", "a\nb\nc\n") == "a\nb\nC\n"


def test_changes_of_one_line_or_at_one_insertion_point_do_not() -> None:
    assert merge_lines("a\nX\n", "a\nb\n", "a\nY\n") is None
    assert merge_lines("a\nnew\nb\n", "a\nb\n", "a\nB\n") is None
    assert merge_lines("a\nb\nnew\n", "a\nb\n", "a\nb\nother\n") is None


def test_far_apart_changes_and_removals_merge() -> None:
    base = "".join(f"line {n}\n" for n in range(10))
    current = base.replace("line 1\n", "").replace("line 8\n", "LINE 8\n")
    other = base.replace("line 4\n", "line 4\nadded\n")
    merged = merge_lines(current, base, other)
    assert merged is not None
    assert "line 1\n" not in merged and "LINE 8\n" in merged and "line 4\nadded\n" in merged
