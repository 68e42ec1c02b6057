"""The observation lifecycle: no file is overwritten without a current observation."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from tests.helpers import call_tool, make_runtime, text_of


def edit(path: str, old: str, new: str) -> dict[str, str]:
    return {"path": path, "old_string": old, "new_string": new}


async def test_edit_without_read_is_refused_then_allowed_after_any_window(workspace: Path) -> None:
    runtime = make_runtime(workspace)
    refused = await call_tool(runtime, "edit_file", edit("src/inventory.py", "amount", "count"))
    assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"
    window = await call_tool(
        runtime, "read_file", {"path": "src/inventory.py", "offset": 3, "limit": 1}
    )
    assert not window.is_error
    done = await call_tool(
        runtime, "edit_file", edit("src/inventory.py", "amount <= 0", "amount < 1")
    )
    assert not done.is_error, text_of(done)
    # The session's own write is an observation: a second edit needs no re-read.
    again = await call_tool(
        runtime, "edit_file", edit("src/inventory.py", "amount < 1", "amount <= 0")
    )
    assert not again.is_error, text_of(again)


async def test_external_change_with_restored_mtime_is_stale(workspace: Path) -> None:
    runtime = make_runtime(workspace)
    target = workspace / "src" / "inventory.py"
    await call_tool(runtime, "read_file", {"path": "src/inventory.py"})
    st = target.stat()
    data = target.read_bytes()
    target.write_bytes(data.replace(b"shop", b"SHOP"))  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    whole = {"path": "src/inventory.py", "content": "Thing\n"}
    result = await call_tool(runtime, "write_file", whole)
    assert result.error is not None and result.error.code == "FS_STALE_VERSION"
    assert b"SHOP" in target.read_bytes() and b"Thing" not in target.read_bytes()


async def test_touch_with_identical_bytes_is_not_a_conflict(workspace: Path) -> None:
    runtime = make_runtime(workspace)
    target = workspace / "src" / "inventory.py"
    await call_tool(runtime, "read_file", {"path": "src/inventory.py"})
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))
    target.write_bytes(target.read_bytes())  # an editor saving the same bytes
    result = await call_tool(runtime, "edit_file", edit("src/inventory.py", "shop", "store"))
    assert not result.is_error, text_of(result)


async def test_two_sessions_from_the_same_version(workspace: Path) -> None:
    runtime = make_runtime(workspace)
    for session in ("a", "b"):
        await call_tool(runtime, "read_file", {"path": "README.md"}, session=session)
    first = await call_tool(runtime, "edit_file", edit("README.md", "tiny", "small"), session="a")
    second = await call_tool(runtime, "edit_file", edit("README.md", "tiny", "little"), session="b")
    assert not first.is_error
    # b's old_string is gone since its read: a conflict naming a (edits merge otherwise).
    assert second.error is not None and second.error.code == "FS_EDIT_CONFLICT"
    assert "by session a (edit_file" in text_of(second)
    assert "small" in (workspace / "README.md").read_text()


async def test_creating_a_file_needs_no_read(workspace: Path) -> None:
    runtime = make_runtime(workspace)
    result = await call_tool(runtime, "write_file", {"path": "new/dir/file.txt", "content": "hi\n"})
    assert not result.is_error, text_of(result)
    assert (workspace / "new" / "dir" / "file.txt").read_text() == "hi\n"
    # Replacing it afterwards needs no read either: the creation was an observation.
    again = await call_tool(runtime, "write_file", {"path": "new/dir/file.txt", "content": "ho\n"})
    assert not again.is_error


async def test_replacing_an_unread_file_is_refused(workspace: Path) -> None:
    runtime = make_runtime(workspace)
    result = await call_tool(runtime, "write_file", {"path": "README.md", "content": "gone"})
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    assert "inventory" in (workspace / "README.md").read_text()


async def test_concurrent_creates_exactly_one_wins(workspace: Path) -> None:
    runtime = make_runtime(workspace)
    results = {}

    async def create(session: str) -> None:
        results[session] = await call_tool(
            runtime, "write_file", {"path": "race.txt", "content": f"{session}\n"}, session=session
        )

    async with anyio.create_task_group() as group:
        for session in ("s1", "s2", "s3", "s4"):
            group.start_soon(create, session)
    winners = [s for s, r in results.items() if not r.is_error]
    losers = [r.error.code for r in results.values() if r.error is not None]
    assert len(winners) == 1
    assert losers == ["FS_ALREADY_EXISTS"] * 3
    assert (workspace / "race.txt").read_text() == f"{winners[0]}\n"


async def test_concurrent_creates_across_processes(workspace: Path) -> None:
    """The no-overwrite create holds even against another process creating the file."""
    from lsp_server.fs import textio

    target = workspace / "proc-race.txt"
    textio.atomic_create(target, b"first\n")
    try:
        textio.atomic_create(target, b"second\n")
    except FileExistsError:
        pass
    else:
        raise AssertionError("a second create replaced the file")
    assert target.read_bytes() == b"first\n"


async def test_deleted_file_after_read_is_stale(workspace: Path) -> None:
    runtime = make_runtime(workspace)
    await call_tool(runtime, "read_file", {"path": "README.md"})
    (workspace / "README.md").unlink()
    result = await call_tool(runtime, "edit_file", edit("README.md", "tiny", "small"))
    assert result.error is not None and result.error.code == "FS_STALE_VERSION"


async def test_move_requires_observation_and_updates_both_paths(workspace: Path) -> None:
    runtime = make_runtime(workspace)
    args = {"source_path": "README.md", "destination_path": "docs/README.md"}
    refused = await call_tool(runtime, "move_file", args)
    assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"
    await call_tool(runtime, "read_file", {"path": "README.md"})
    moved = await call_tool(runtime, "move_file", args)
    assert not moved.is_error, text_of(moved)
    assert not (workspace / "README.md").exists()
    edited = await call_tool(runtime, "edit_file", edit("docs/README.md", "tiny", "small"))
    assert not edited.is_error, text_of(edited)
    occupied = await call_tool(
        runtime,
        "move_file",
        {"source_path": "docs/README.md", "destination_path": "src/inventory.py"},
    )
    assert occupied.error is not None and occupied.error.code == "FS_ALREADY_EXISTS"


def test_kept_contents_stay_within_the_budget() -> None:
    from lsp_server.fs.textio import BufferVersion
    from lsp_server.runtime.sessions.observations import SEEN_TEXT_CHARS, Observations, SeenBudget

    budget = SeenBudget(limit=250)  # shared by the sessions of a server
    first, second = Observations(budget), Observations(budget)
    first.record_present(Path("a"), BufferVersion("a", 1, "h"), "a" * 100)
    second.record_present(Path("b"), BufferVersion("b", 1, "h"), "b" * 100)
    second.record_present(Path("c"), BufferVersion("c", 1, "h"), "c" * 100)
    # The oldest content (another session's) went; its version stays.
    assert (budget.used, first.content_cost, second.content_cost) == (200, 0, 200)
    oldest = first.get(Path("a"))
    assert oldest is not None and oldest.seen is None and oldest.state == "present"
    kept = [second.get(Path(n)) for n in "bc"]
    assert [o.seen.text for o in kept if o and o.seen] == ["b" * 100, "c" * 100]
    second.record_absent(Path("b"))  # a new observation replaces the content it held
    assert (budget.used, second.content_cost) == (100, 100)
    big = "line\n" * (SEEN_TEXT_CHARS // 5 + 1)
    large = Observations()
    large.record_present(Path("big"), BufferVersion("big", 1, "h"), big)
    seen = large.get(Path("big")).seen  # type: ignore[union-attr]
    assert seen is not None and seen.text is None and seen.lines == big.count("\n")
    assert large.content_cost == 4 * seen.lines  # one 4-byte digest per line, no text


def test_an_unchanged_file_read_again_keeps_its_observation_and_becomes_the_newest() -> None:
    """A read of a file whose hash has not changed leaves its observation as it was (its
    kept text counted once) and makes it the last the budget drops."""
    from lsp_server.fs.textio import FileVersion
    from lsp_server.runtime.sessions.observations import Observations, SeenBudget

    def version(sha: str) -> FileVersion:
        return FileVersion(device=1, inode=2, size=3, mtime_ns=4, ctime_ns=5, sha256=sha)

    budget = SeenBudget(limit=250)
    seen = Observations(budget)
    a, b, c = Path("/ws/a"), Path("/ws/b"), Path("/ws/c")
    seen.record_present(a, version("a1"), "a" * 100)
    seen.record_present(b, version("b1"), "b" * 100)
    kept = seen.get(a)
    seen.record_present(a, version("a1"), "a" * 100)  # unchanged
    assert seen.get(a) is kept and seen.content_cost == budget.used == 200
    seen.record_present(c, version("c1"), "c" * 100)  # over the budget: the oldest goes
    b_seen, a_seen = seen.get(b), seen.get(a)
    assert b_seen is not None and b_seen.seen is None  # b, not a: a was read again
    assert a_seen is not None and a_seen.seen is not None and a_seen.seen.text == "a" * 100
    seen.record_present(a, version("a2"), "A" * 100)  # changed: a new observation
    a_now = seen.get(a)
    assert a_now is not None and a_now.seen is not None and a_now.seen.text == "A" * 100
    assert seen.content_cost == budget.used == 200
