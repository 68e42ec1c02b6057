"""A shell command's checkpoint holds its own changes, not those another session's command,
a tool call or the editor's save made while it ran; reverting it never undoes theirs
(checkpoints/sharing/attribution.py). Each mix on one server and on two servers on one
folder."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from lsp_server.checkpoints.records import Checkpoint, FileRecord
from lsp_server.checkpoints.shadow.tree_changes import Entry
from lsp_server.checkpoints.sharing import attribution, side_files
from lsp_server.procs import process_writes
from tests.checkpoints.snapshots import changes, checkpoints
from tests.conftest import missing_part
from tests.helpers import lsp_call, lsp_session, text_of

BYPASS = {"policy": {"mode": "bypass"}}
BY_ORIGIN = {**BYPASS, "checkpoints": {"exact_attribution": False}}
MECHANISMS = ["kernel", "origin"]
"""kernel: the kernel names each writer (procs/process_writes.py; needs root, as in CI);
origin: where it cannot, other writers are told apart by their records and saves."""
# Session A's command starts, says so, and waits until the other writer is done; so the
# other writer's change falls inside A's window without a sleep. `go` is made by the test, a
# program toolhost does not know: only the kernel can tell it is not the command's.
A_EXACTLY = {("created", "started", None), ("modified", "a.txt", None)}
A_BY_ORIGIN = {*A_EXACTLY, ("created", "go", None)}


def options_for(mechanism: str) -> dict[str, Any]:
    if mechanism == "kernel" and process_writes.shared() is None:
        missing_part(f"the kernel names no writer here: {process_writes.unavailable()}")
    return BYPASS if mechanism == "kernel" else BY_ORIGIN


def a_alone(mechanism: str) -> set[tuple[str, str, None]]:
    return A_EXACTLY if mechanism == "kernel" else A_BY_ORIGIN


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
async def two_clients(
    root: Path, servers: int, mechanism: str
) -> AsyncIterator[tuple[LanguageClient, ...]]:
    options = options_for(mechanism)
    async with lsp_session(root, options) as first:
        if servers == 1:
            yield first, first
            return
        async with lsp_session(root, options) as second:
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
    on (`go`, made by a program toolhost does not know)."""
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


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("servers", [1, 2])
@pytest.mark.timeout(240)
@pytest.mark.slow
async def test_two_commands_each_keep_their_own_changes(
    tmp_path: Path, servers: int, mechanism: str
) -> None:
    root = make_root(tmp_path)
    async with two_clients(root, servers, mechanism) as (client_a, client_b):

        async def command_b() -> None:
            result = await lsp_call(
                client_b, "bash", {"command": "echo B >> b.txt"}, session="B", callId="c-B"
            )
            assert not result["isError"], text_of(result)

        await run_beside_a(client_a, root, command_b)
        found = listed_by_call(await checkpoints(client_a))
        assert changes(found["c-A"]) == a_alone(mechanism)
        assert changes(found["c-B"]) == {("modified", "b.txt", None)}

        undone = await revert(client_a, "c-A")
        assert undone["conflicts"] == []
        made = {path for _, path, _ in a_alone(mechanism)}
        assert sorted(undone["reverted"]) == sorted(made)
        assert (root / "a.txt").read_text() == "a\n"
        assert (root / "b.txt").read_text() == "b\nB\n"  # B's change stays
        assert (root / "go").exists() == (mechanism == "kernel")  # the test's, not A's

        if mechanism == "kernel":  # the kernel saw A's processes leave b.txt alone
            done = await revert(client_b, "c-B")
            assert done["conflicts"] == [] and done["reverted"] == ["b.txt"]
            assert (root / "b.txt").read_text() == "b\n"
            return
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


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("servers", [1, 2])
@pytest.mark.timeout(240)
@pytest.mark.slow
async def test_a_tool_call_during_a_command_is_not_the_commands(
    tmp_path: Path, servers: int, mechanism: str
) -> None:
    root = make_root(tmp_path)
    async with two_clients(root, servers, mechanism) as (client_a, client_b):

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
        assert changes(found["c-A"]) == a_alone(mechanism)
        undone = await revert(client_a, "c-A")
        assert undone["conflicts"] == []
        assert (root / "b.txt").read_text() == "b by a tool\n"
        assert (root / "c.txt").read_text() == "new\n"


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("servers", [1, 2])
@pytest.mark.timeout(240)
@pytest.mark.slow
async def test_an_editor_save_during_a_command_is_the_users(
    tmp_path: Path, servers: int, mechanism: str
) -> None:
    root = make_root(tmp_path)
    async with two_clients(root, servers, mechanism) as (client_a, editor):

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
                if len(side_files.saves_since(store, 0)) == 2:
                    break
                await asyncio.sleep(0.05)

        await run_beside_a(client_a, root, save_in_the_editor)
        found = listed_by_call(await checkpoints(client_a))
        assert changes(found["c-A"]) == a_alone(mechanism)
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
        side_files.EditorSave("x", "2" * 40, 12.0),
        side_files.EditorSave("y", "9" * 40, 12.0),
    ]
    kept, others = attribution.split(mine, "c", 5.0, [], saves)
    assert kept == [mine[1]]
    assert {(o.path, o.share) for o in others} == {("x", "theirs"), ("y", "both")}
    assert all(o.describe() == "the user's editor" for o in others)


def test_a_command_still_running_holds_the_revert_of_one_it_overlapped() -> None:
    ended = checkpoint("c", [record("x", "1", "2")])
    running = side_files.RunningCommand("r", "R", "bash", "npm run dev", 15.0, 1)
    [(path, verdict)] = attribution.verdicts(ended, [], [running], []).items()
    assert path == "x" and "session R (bash `npm run dev`, still running)" in verdict.names
    later = side_files.RunningCommand("r", "R", "bash", "npm run dev", 25.0, 1)
    assert attribution.verdicts(ended, [], [later], []) == {}


def test_a_writers_record_journaled_late_is_still_found_at_the_revert() -> None:
    command = checkpoint("c", [record("x", "1", "2"), record("y", "1", "2")])
    late = checkpoint("w", [record("x", "1", "2")], reads="editor", time=12.0, ended=12.5)
    found = attribution.verdicts(command, [late], [], [])
    assert set(found) == {"x"} and found["x"].theirs


def test_saves_and_running_commands_live_beside_the_store(tmp_path: Path) -> None:
    side_files.note_save(tmp_path, side_files.EditorSave("a b.txt", "1" * 40, 100.0))
    side_files.note_save(tmp_path, side_files.EditorSave("c", "2" * 40, 200.0))
    (tmp_path / side_files.SAVES).open("a").write("not json\n")
    assert [s.path for s in side_files.saves_since(tmp_path, 150.0)] == ["c"]

    class Window:
        call_id, session, tool, label, started = "c-1", "A", "bash", "make", 1.0

    side_files.mark_running(tmp_path, Window())  # type: ignore[arg-type]
    assert [c.call_id for c in side_files.running(tmp_path)] == ["c-1"]
    side_files.unmark_running(tmp_path, "c-1")
    assert side_files.running(tmp_path) == []


# -- only the kernel can tell -----------------------------------------------------------------


@pytest.mark.parametrize("servers", [1, 2])
@pytest.mark.timeout(240)
@pytest.mark.slow
async def test_a_background_job_and_a_command_each_keep_only_their_own(
    tmp_path: Path, servers: int
) -> None:
    """A job (run_in_background) that writes all through another session's command: each
    checkpoint holds its own processes' changes, and reverting one leaves the other's."""
    root = make_root(tmp_path)
    async with two_clients(root, servers, "kernel") as (client_a, client_b):
        job = "echo up > started && while [ ! -e go ]; do sleep 0.05; done && echo J >> a.txt"
        started = await lsp_call(
            client_a, "bash", {"command": job, "run_in_background": True}, session="A"
        )
        assert not started["isError"], text_of(started)
        await until_exists(root / "started")
        command = "echo B >> b.txt && touch go"  # the command lets the job go on
        done = await lsp_call(client_b, "bash", {"command": command}, session="B", callId="c-B")
        assert not done["isError"], text_of(done)
        ended = await lsp_call(
            client_a,
            "job_output",
            {"job_id": "bash-1", "wait": True, "timeout_ms": 60_000},
            session="A",
        )
        assert "[status: exited 0]" in text_of(ended), text_of(ended)
        for _ in range(2400):  # the job's checkpoint is recorded as it ends
            found = {item["callId"]: item for item in await checkpoints(client_a)}
            if len(found) == 2:
                break
            await asyncio.sleep(0.05)
        [job_call] = [call for call in found if call != "c-B"]
        assert changes(found[job_call]) == {
            ("created", "started", None),
            ("modified", "a.txt", None),
        }
        assert changes(found["c-B"]) == {("modified", "b.txt", None), ("created", "go", None)}

        undone = await revert(client_b, "c-B")
        assert undone["conflicts"] == [] and sorted(undone["reverted"]) == ["b.txt", "go"]
        assert (root / "a.txt").read_text() == "a\nJ\n"  # the job's change stays


@pytest.mark.timeout(240)
@pytest.mark.slow
async def test_two_commands_that_write_one_file_both_hold_it(tmp_path: Path) -> None:
    """Both commands' processes wrote shared.txt: each checkpoint holds it, and reverting
    either asks first, naming the other."""
    root = make_root(tmp_path)
    async with two_clients(root, 1, "kernel") as (client, _):

        async def command_b() -> None:
            result = await lsp_call(
                client, "bash", {"command": "echo B >> b.txt"}, session="B", callId="c-B"
            )
            assert not result["isError"], text_of(result)

        slow = "echo up > started && while [ ! -e go ]; do sleep 0.05; done && echo A >> b.txt"
        task = asyncio.create_task(
            lsp_call(client, "bash", {"command": slow}, session="A", callId="c-A")
        )
        await until_exists(root / "started")
        await command_b()
        (root / "go").write_text("")
        assert not (await task)["isError"]
        found = listed_by_call(await checkpoints(client))
        assert ("modified", "b.txt", None) in changes(found["c-A"])
        held = await revert(client, "c-B")
        assert held["reverted"] == []
        [conflict] = held["conflicts"]
        assert conflict["path"] == "b.txt" and "session A" in conflict["reason"]
