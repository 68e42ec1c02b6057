"""Edits that merge: an edit of a file another session (or program) changed since this
session read it applies to the current text when it touches none of the changed lines, and
says what else changed and by whom; an edit that overlaps a change is refused naming the
other session. write_file keeps the strict rule."""

from __future__ import annotations

from pathlib import Path

from lsp_server.runtime.sessions.edit_merge import Hunk, hunks, overlaps
from lsp_server.runtime.sessions.observations import SEEN_TEXT_CHARS
from tests.helpers import call_tool, make_runtime, text_of

TEN = "".join(f"line {n}\n" for n in range(1, 11))


async def _both_read(root: Path, text: str = TEN) -> object:
    (root / "f.txt").write_text(text)
    runtime = make_runtime(root)
    for session in ("alice", "bob"):
        read = await call_tool(runtime, "read_file", {"path": "f.txt"}, session=session)
        assert read.error is None, text_of(read)
    return runtime


async def test_an_edit_elsewhere_merges_and_names_the_other_session(tmp_path: Path) -> None:
    runtime = await _both_read(tmp_path)
    first = await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "line 2\n", "new_string": "line two\n"},
        session="bob",
    )
    assert first.error is None, text_of(first)
    second = await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "line 7\n", "new_string": "line seven\n"},
        session="alice",
    )
    assert second.error is None, text_of(second)
    note = text_of(second)
    assert "also changed since your read: line 2, by session bob (edit_file, " in note
    assert (tmp_path / "f.txt").read_text() == TEN.replace("line 2\n", "line two\n").replace(
        "line 7\n", "line seven\n"
    )
    # The merged text counts as read: a next edit needs no re-read.
    third = await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "line 9\n", "new_string": "line nine\n"},
        session="alice",
    )
    assert third.error is None and "merged" not in text_of(third)


async def test_an_overlapping_edit_is_refused_naming_the_other_session(tmp_path: Path) -> None:
    runtime = await _both_read(tmp_path)
    await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "line 4\nline 5\n", "new_string": "four\nfive\n"},
        session="bob",
    )
    clash = await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "line 3\nline 4\n", "new_string": "x\n"},
        session="alice",
    )
    assert clash.error is not None and clash.error.code == "FS_EDIT_CONFLICT", text_of(clash)
    text = text_of(clash)
    assert "lines 4-5, by session bob (edit_file" in text and "+four" in text
    assert clash.error.recovery
    assert "four\nfive\n" in (tmp_path / "f.txt").read_text()  # nothing was lost
    # An old_string that no longer matches says so (no merge of what is not there).
    gone = await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "line 5\n", "new_string": "5\n"},
        session="alice",
    )
    assert gone.error is not None and gone.error.code == "edit.not_found"


async def test_multi_edit_and_delete_range_merge_too(tmp_path: Path) -> None:
    runtime = await _both_read(tmp_path)
    await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "line 1\n", "new_string": "one\n"},
        session="bob",
    )
    multi = await call_tool(
        runtime,
        "multi_edit",
        {
            "path": "f.txt",
            "edits": [
                {"old_string": "line 5\n", "new_string": "five\n"},
                {"old_string": "line 6\n", "new_string": "six\n"},
            ],
        },
        session="alice",
    )
    assert multi.error is None and "by session bob" in text_of(multi), text_of(multi)
    await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "line 10\n", "new_string": "ten\n"},
        session="bob",
    )
    deleted = await call_tool(
        runtime,
        "delete_range",
        {"path": "f.txt", "start_anchor": "line 7", "end_anchor": "line 8"},
        session="alice",
    )
    assert deleted.error is None and "line 10, by session bob" in text_of(deleted)
    assert (tmp_path / "f.txt").read_text() == (
        "one\nline 2\nline 3\nline 4\nfive\nsix\nline 9\nten\n"
    )


async def test_write_file_keeps_the_strict_rule(tmp_path: Path) -> None:
    runtime = await _both_read(tmp_path)
    await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "line 1\n", "new_string": "one\n"},
        session="bob",
    )
    whole = await call_tool(
        runtime, "write_file", {"path": "f.txt", "content": "mine\n"}, session="alice"
    )
    assert whole.error is not None and whole.error.code == "FS_STALE_VERSION"
    assert "by session bob (edit_file" in text_of(whole)


async def test_a_change_by_another_program_is_named_so(tmp_path: Path) -> None:
    runtime = await _both_read(tmp_path)
    (tmp_path / "f.txt").write_text(TEN.replace("line 1\n", "outside\n"))
    merged = await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "line 9\n", "new_string": "nine\n"},
        session="alice",
    )
    assert "line 1, by another program (not a toolhost session)" in text_of(merged)


async def test_a_large_file_falls_back_to_the_strict_rule_and_says_so(tmp_path: Path) -> None:
    big = "".join(f"row {n:08d} " + "x" * 40 + "\n" for n in range(SEEN_TEXT_CHARS // 40))
    runtime = await _both_read(tmp_path, big)
    await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "row 00000001 ", "new_string": "ROW 00000001 "},
        session="bob",
    )
    stale = await call_tool(
        runtime,
        "edit_file",
        {"path": "f.txt", "old_string": "row 00000500 ", "new_string": "ROW 00000500 "},
        session="alice",
    )
    assert stale.error is not None and stale.error.code == "FS_STALE_VERSION"
    assert "cannot be merged" in text_of(stale) and "by session bob" in text_of(stale)


def test_overlap_rules() -> None:
    base = "a\nb\nc\nd\n"
    theirs = hunks(base, "a\nB\nc\nd\n")
    assert theirs == [Hunk(1, 2, ("B\n",))]
    assert not overlaps(theirs[0], Hunk(2, 3))  # the next line: no overlap
    assert not overlaps(theirs[0], Hunk(0, 1))  # the line before
    assert overlaps(theirs[0], Hunk(1, 2))
    removed = hunks(base, "a\nc\nd\n")[0]
    assert removed == Hunk(1, 1)  # lines removed before line 2 of the current text
    assert overlaps(removed, Hunk(0, 1)) and overlaps(removed, Hunk(1, 2))  # touching it
    assert overlaps(removed, Hunk(1, 1))  # an insertion where lines went: ambiguous
    assert not overlaps(removed, Hunk(2, 3))
