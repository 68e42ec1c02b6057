"""A shell command's checkpoint holds its own changes, not those another session's command,
a tool call or the editor's save made while it ran; reverting it never undoes theirs
(checkpoints/attribution.py). Each mix on one server and on two servers on one folder."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from lsp_server.checkpoints import attribution
from lsp_server.checkpoints.records import Checkpoint, FileRecord
from lsp_server.checkpoints.shadow.tree_changes import Entry
from tests.checkpoints.snapshots import changes, checkpoints
from tests.helpers import lsp_call, lsp_session, text_of

BYPASS = {"policy": {"mode": "bypass"}}
# Session A's command starts, says so, and waits until the other writer is done; so the
# other writer's change falls inside A's window without a sleep.
A_ALONE = {("created", "started", None), ("created", "go", None), ("modified", "a.txt", None)}
SLOW_A = "echo up > started && while [ ! -e go ]; do sleep 0.05; done && echo A >> a.txt"


async def revert(client: LanguageClient, call_id: str, **extra: Any) -> dict[str, Any]:
    params = {"callId": call_id, **extra}
    result: dict[str, Any] = await client.protocol.send_request_async("toolhost/revert", params)
    return result


async def until_exists(path: Path) -> None:
    for _ in range(2400):
        if path.exists():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


@contextlib.asynccontextmanager
async def two_clients(root: Path, servers: int) -> AsyncIterator[tuple[LanguageClient, ...]]:
    async with lsp_session(root, BYPASS) as first:
        if servers == 1:
            yield first, first
            return
        async with lsp_session(root, BYPASS) as second:
            yield first, second


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    return root


async def run_beside_a(
    client_a: LanguageClient, root: Path, other: Callable[[], Awaitable[None]]
) -> dict[str, Any]:
    """Session A's slow command, with `other` run while it waits; then the test lets it go
    on (`go`, made by a program toolhost does not know: the command's, as far as it can
    tell)."""
    slow = asyncio.create_task(
        lsp_call(client_a, "bash", {"command": SLOW_A}, session="A", callId="c-A")
    )
    await until_exists(root / "started")
    await other()
    (root / "go").write_text("")
    result = await slow
    assert not result["isError"], text_of(result)
    return result


def listed_by_call(listed: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["callId"]: item for item in listed}


@pytest.mark.parametrize("servers", [1, 2])
@pytest.mark.timeout(240)
@pytest.mark.slow
async def test_two_commands_each_keep_their_own_changes(tmp_path: Path, servers: int) -> None:
    root = make_root(tmp_path)
    async with two_clients(root, servers) as (client_a, client_b):

        async def command_b() -> None:
            result = await lsp_call(
                client_b, "bash", {"command": "echo B >> b.txt"}, session="B", callId="c-B"
            )
            assert not result["isError"], text_of(result)

        await run_beside_a(client_a, root, command_b)
        found = listed_by_call(await checkpoints(client_a))
        assert changes(found["c-A"]) == A_ALONE
        assert changes(found["c-B"]) == {("modified", "b.txt", None)}

        undone = await revert(client_a, "c-A")
        assert undone["conflicts"] == []
        assert sorted(undone["reverted"]) == ["a.txt", "go", "started"]
        assert (root / "a.txt").read_text() == "a\n"
        assert (root / "b.txt").read_text() == "b\nB\n"  # B's change stays

        # A ran all through B's command and might have written b.txt then: B's revert asks
        # (leaves it, names A) and reverts it when asked again.
        held = await revert(client_b, "c-B")
        assert held["reverted"] == []
        reasons = {c["path"]: c["reason"] for c in held["conflicts"]}
        assert set(reasons) == {"b.txt"}
        assert "session A (bash `echo up > started" in reasons["b.txt"]
        assert "include_shared" in reasons["b.txt"]
        assert (root / "b.txt").read_text() == "b\nB\n"
        done = await revert(client_b, "c-B", includeShared=True)
        assert done["conflicts"] == [] and done["reverted"] == ["b.txt"]
        assert (root / "b.txt").read_text() == "b\n"


@pytest.mark.parametrize("servers", [1, 2])
@pytest.mark.timeout(240)
@pytest.mark.slow
async def test_a_tool_call_during_a_command_is_not_the_commands(
    tmp_path: Path, servers: int
) -> None:
    root = make_root(tmp_path)
    async with two_clients(root, servers) as (client_a, client_b):

        async def tool_calls_of_b() -> None:
            await lsp_call(client_b, "read_file", {"path": "b.txt"}, session="B")
            for path, text in (("b.txt", "b by a tool\n"), ("c.txt", "new\n")):
                result = await lsp_call(
                    client_b, "write_file", {"path": path, "content": text}, session="B"
                )
                assert not result["isError"], text_of(result)
            await checkpoints(client_b)  # its server's records are in the store

        await run_beside_a(client_a, root, tool_calls_of_b)
        found = listed_by_call(await checkpoints(client_a))
        assert changes(found["c-A"]) == A_ALONE
        undone = await revert(client_a, "c-A")
        assert undone["conflicts"] == []
        assert (root / "b.txt").read_text() == "b by a tool\n"
        assert (root / "c.txt").read_text() == "new\n"


@pytest.mark.parametrize("servers", [1, 2])
@pytest.mark.timeout(240)
@pytest.mark.slow
async def test_an_editor_save_during_a_command_is_the_users(tmp_path: Path, servers: int) -> None:
    root = make_root(tmp_path)
    async with two_clients(root, servers) as (client_a, editor):

        async def save_in_the_editor() -> None:
            # As an editor saves: it writes the file, then tells its server.
            for name, text in (("b.txt", "b saved by the user\n"), ("c.txt", "new\n")):
                (root / name).write_text(text)
                editor.text_document_did_save(
                    types.DidSaveTextDocumentParams(
                        text_document=types.TextDocumentIdentifier(uri=(root / name).as_uri())
                    )
                )
            # The server notes a save off the event loop: wait until both are noted.
            [store] = (root.parent / f".{root.name}-state" / "checkpoints").iterdir()
            for _ in range(2400):
                if len(attribution.saves_since(store, 0)) == 2:
                    break
                await asyncio.sleep(0.05)

        await run_beside_a(client_a, root, save_in_the_editor)
        found = listed_by_call(await checkpoints(client_a))
        assert changes(found["c-A"]) == A_ALONE
        undone = await revert(client_a, "c-A")
        assert undone["conflicts"] == []
        assert (root / "b.txt").read_text() == "b saved by the user\n"
        assert (root / "c.txt").read_text() == "new\n"


# -- the rules, on records ------------------------------------------------------------------


def entry(oid: str) -> Entry:
    return Entry(oid * 40, 0o100644)


def record(path: str, before: str, after: str) -> FileRecord:
    return FileRecord(path, "modified", entry(before), entry(after))


def checkpoint(call_id: str, files: list[FileRecord], **extra: Any) -> Checkpoint:
    values: dict[str, Any] = {"time": 10.0, "ended": 20.0, "reads": "disk", "label": "cmd"}
    values.update(extra)
    return Checkpoint(1, call_id, call_id.upper(), "bash", files=tuple(files), **values)


def test_a_change_another_writer_made_differently_stays_and_is_marked_both() -> None:
    mine = [record("x", "1", "3"), record("y", "1", "2")]
    writer = checkpoint("w", [record("x", "1", "2"), record("y", "1", "2")], reads="editor")
    kept, others = attribution.split(mine, "c", 5.0, [writer], [])
    assert kept == [mine[0]]
    assert {(o.path, o.share, o.exact) for o in others} == {
        ("x", "both", True),
        ("y", "theirs", True),
    }
    revert_of = attribution.verdicts(checkpoint("c", kept, others=others), [], [], [])
    assert set(revert_of) == {"x"} and not revert_of["x"].theirs
    assert "session W (bash `cmd`, call w)" in revert_of["x"].names


def test_a_save_explains_only_the_content_it_saved() -> None:
    mine = [record("x", "1", "2"), record("y", "1", "3")]
    saves = [
        attribution.EditorSave("x", "2" * 40, 12.0),
        attribution.EditorSave("y", "9" * 40, 12.0),
    ]
    kept, others = attribution.split(mine, "c", 5.0, [], saves)
    assert kept == [mine[1]]
    assert {(o.path, o.share) for o in others} == {("x", "theirs"), ("y", "both")}
    assert all(o.describe() == "the user's editor" for o in others)


def test_a_command_still_running_holds_the_revert_of_one_it_overlapped() -> None:
    ended = checkpoint("c", [record("x", "1", "2")])
    running = attribution.RunningCommand("r", "R", "bash", "npm run dev", 15.0, 1)
    [(path, verdict)] = attribution.verdicts(ended, [], [running], []).items()
    assert path == "x" and "session R (bash `npm run dev`, still running)" in verdict.names
    later = attribution.RunningCommand("r", "R", "bash", "npm run dev", 25.0, 1)
    assert attribution.verdicts(ended, [], [later], []) == {}


def test_a_writers_record_journaled_late_is_still_found_at_the_revert() -> None:
    command = checkpoint("c", [record("x", "1", "2"), record("y", "1", "2")])
    late = checkpoint("w", [record("x", "1", "2")], reads="editor", time=12.0, ended=12.5)
    found = attribution.verdicts(command, [late], [], [])
    assert set(found) == {"x"} and found["x"].theirs


def test_saves_and_running_commands_live_beside_the_store(tmp_path: Path) -> None:
    attribution.note_save(tmp_path, attribution.EditorSave("a b.txt", "1" * 40, 100.0))
    attribution.note_save(tmp_path, attribution.EditorSave("c", "2" * 40, 200.0))
    (tmp_path / attribution.SAVES).open("a").write("not json\n")
    assert [s.path for s in attribution.saves_since(tmp_path, 150.0)] == ["c"]

    class Window:
        call_id, session, tool, label, started = "c-1", "A", "bash", "make", 1.0

    attribution.mark_running(tmp_path, Window())  # type: ignore[arg-type]
    assert [c.call_id for c in attribution.running(tmp_path)] == ["c-1"]
    attribution.unmark_running(tmp_path, "c-1")
    assert attribution.running(tmp_path) == []
