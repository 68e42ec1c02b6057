"""A shell command's checkpoint holds its own changes, not those another session's command,
a tool call or the editor's save made while it ran; reverting it never undoes theirs
(checkpoints/sharing/attribution.py). Each mix on one server and on two servers on one
folder."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from lsp_server.checkpoints import journal
from lsp_server.checkpoints.journal import JournalFile
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
# program toolhost does not know: by origin it counts as A's; the kernel sees that no process
# of A's made it, but nothing names who did, so A's checkpoint keeps it marked (reverting A
# asks before it undoes it: no change may end up in no checkpoint).
A_CHANGES = {("created", "started", None), ("modified", "a.txt", None), ("created", "go", None)}
UNKNOWN_WRITER = (
    "another process (not one of this command's) changed it while this command ran, and no "
    "toolhost call or editor save made that change; revert it anyway with include_shared"
)


def options_for(mechanism: str) -> dict[str, Any]:
    if mechanism == "kernel" and process_writes.shared() is None:
        missing_part(f"the kernel names no writer here: {process_writes.unavailable()}")
    return BYPASS if mechanism == "kernel" else BY_ORIGIN


def held_of_a(mechanism: str) -> set[str]:
    """What reverting A asks before it undoes: `go`, where the kernel saw it was not A's."""
    return {"go"} if mechanism == "kernel" else set()


def assert_reverted_a(undone: dict[str, Any], root: Path, mechanism: str) -> None:
    held = held_of_a(mechanism)
    reasons = {c["path"]: c["reason"] for c in undone["conflicts"]}
    assert set(reasons) == held, reasons
    assert all(UNKNOWN_WRITER in reason for reason in reasons.values()), reasons
    assert sorted(undone["reverted"]) == sorted({path for _, path, _ in A_CHANGES} - held)
    assert (root / "a.txt").read_text() == "a\n"
    assert (root / "go").exists() == (mechanism == "kernel")  # the test's: the revert asks


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
        assert changes(found["c-A"]) == A_CHANGES
        assert changes(found["c-B"]) == {("modified", "b.txt", None)}

        assert_reverted_a(await revert(client_a, "c-A"), root, mechanism)
        assert (root / "b.txt").read_text() == "b\nB\n"  # B's change stays

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
        assert changes(found["c-A"]) == A_CHANGES
        assert_reverted_a(await revert(client_a, "c-A"), root, mechanism)
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
        assert changes(found["c-A"]) == A_CHANGES
        assert_reverted_a(await revert(client_a, "c-A"), root, mechanism)
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


def test_exactly_a_change_no_writer_is_named_for_stays_marked_and_its_revert_asks(
    tmp_path: Path,
) -> None:
    """The kernel says the command wrote x only. y is exactly a writer's change (theirs), z
    a command still running here wrote (its own checkpoint holds it), w and v no one known
    (v also changed differently by the writer): w and v stay, marked, and the revert asks."""
    files = [record(p, "1", "2") for p in ("x", "y", "z", "w")] + [record("v", "1", "3")]
    writer = checkpoint("t", [record("y", "1", "2"), record("v", "1", "2")], reads="editor")
    elsewhere = side_files.RunningCommand("r", "R", "bash", "make", 1.0, 1)
    kept, others = attribution.exact_split(
        files,
        "c",
        5.0,
        [writer],
        [],
        process_writes.Written({str(tmp_path / "x")}),
        tmp_path,
        process_writes.Written({str(tmp_path / "z")}),
        [elsewhere],
    )
    assert [f.path for f in kept] == ["x", "w", "v"]
    assert {(o.path, o.call_id or o.tool, o.share) for o in others} == {
        ("y", "t", "theirs"),
        ("z", attribution.PROCESS, "theirs"),
        ("w", attribution.PROCESS, "both"),
        ("w", "r", "both"),
        ("v", attribution.PROCESS, "both"),
        ("v", "t", "both"),
        ("v", "r", "both"),
    }
    command = checkpoint("c", kept, others=others, exact=True)
    found = attribution.verdicts(command, [], [], [])
    assert set(found) == {"w", "v"} and not any(v.theirs for v in found.values())
    assert found["w"].reason() == (
        "another process (not one of this command's) changed it while this command ran, "
        "and no toolhost call or editor save made that change; session R (bash `make`, "
        "call r) changed files meanwhile too; revert it anyway with include_shared (CLI: "
        "toolhost revert --include-shared)"
    )
    # Once the running command is recorded with w exactly as its own, w is its change.
    done = checkpoint("r", [record("w", "1", "2")], exact=True, time=1.0, ended=30.0)
    assert attribution.verdicts(command, [done], [], [])["w"].theirs


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


def test_a_writers_change_is_known_from_its_journal_before_it_is_recorded(
    tmp_path: Path,
) -> None:
    """Another toolhost process's writer journals its change as its call answers and records
    it in a batch later: a command ending meanwhile reads the journal, so the change is
    named (theirs), not taken for an unknown process's."""
    change = record("x", "1", "2")
    writer = JournalFile(tmp_path)
    writer.append(
        journal.encode(
            journal.JournalEntry("w", "W", "edit_file", 12.0, 12.5, (change,), "editor", None, {})
        )
    )
    writer.append(b"toolhost-journal-1 999 0\n{")  # a torn last entry (mid-append)
    closed = writer.rotate()  # the file stays, its lock goes
    assert closed is not None
    closed.release()
    [pending] = journal.pending(tmp_path)
    assert (pending.call_id, pending.files, pending.reads) == ("w", (change,), "editor")
    kept, others = attribution.exact_split(
        [change], "c", 5.0, [pending], [], process_writes.Written(), tmp_path
    )
    assert kept == [] and [(o.call_id, o.share) for o in others] == [("w", "theirs")]


# -- only the kernel can tell -----------------------------------------------------------------


@pytest.mark.parametrize("servers", [1, 2])
@pytest.mark.timeout(240)
@pytest.mark.slow
async def test_a_background_job_and_a_command_each_keep_only_their_own(
    tmp_path: Path, servers: int
) -> None:
    """A job (run_in_background) that runs all through another session's command: the
    command lets it go on, and waits for its write, so each writes while the other runs
    (the job ends first). Each checkpoint holds its own processes' changes, and reverting
    either leaves the other's. On one server the kernel names both commands' processes at
    once. On two, the job's server sees only that a process outside the job wrote b.txt and
    go (the job's checkpoint keeps them, marked); the command's checkpoint, recorded later,
    shows they are exactly its own, so the job's revert leaves them as the command's."""
    root = make_root(tmp_path)
    async with two_clients(root, servers, "kernel") as (client_a, client_b):
        job = "echo up > started && while [ ! -e go ]; do sleep 0.05; done && echo J >> a.txt"
        started = await lsp_call(
            client_a, "bash", {"command": job, "run_in_background": True}, session="A"
        )
        assert not started["isError"], text_of(started)
        await until_exists(root / "started")
        command = "echo B >> b.txt && touch go && while ! grep -q J a.txt; do sleep 0.05; done"
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
        of_job = {("created", "started", None), ("modified", "a.txt", None)}
        of_b = {("modified", "b.txt", None), ("created", "go", None)}
        assert changes(found[job_call]) == (of_job | of_b if servers == 2 else of_job)
        assert changes(found["c-B"]) == of_b

        undone = await revert(client_b, "c-B")
        assert undone["conflicts"] == [] and sorted(undone["reverted"]) == ["b.txt", "go"]
        assert (root / "a.txt").read_text() == "a\nJ\n"  # the job's change stays

        undone = await revert(client_a, job_call)
        assert undone["conflicts"] == [] and sorted(undone["reverted"]) == ["a.txt", "started"]
        assert (root / "a.txt").read_text() == "a\n"
        assert (root / "b.txt").read_text() == "b\n"  # B's revert stays
        if servers == 2:
            assert "  b.txt: by session B (bash `echo B >> b.txt" in undone["text"]
            assert "call c-B)" in undone["text"]


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


# -- a writer outside every command ---------------------------------------------------------

OUTSIDE = "while [ ! -e trigger ]; do sleep 0.05; done; echo outside >> b.txt"
"""A writer that waits for the command's `trigger`, then changes b.txt."""


def toolhost_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(root.parent / f".{root.name}-state")}
    return subprocess.run(
        [sys.executable, "-m", "lsp_server", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


@pytest.mark.parametrize("writer", ["the test's process", "an earlier command's daemon"])
@pytest.mark.timeout(240)
@pytest.mark.slow
async def test_a_change_no_one_is_known_to_have_made_stays_undoable(
    tmp_path: Path, writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process outside the command's tree (the test's own, or a daemon an earlier command
    left running: what a prompt-injected agent could hand a write to) changes b.txt while
    the command runs. The kernel sees the command did not write it, and nothing names who
    did: the command's checkpoint keeps it, and reverting the command asks before it undoes
    it (over the wire and from the shell), then undoes it when asked again."""
    root = make_root(tmp_path)
    # The user's config lets a command's daemons live on (outside the sandbox's namespace).
    config = tmp_path / "config"
    (config / "toolhost").mkdir(parents=True)
    (config / "toolhost" / "config.toml").write_text(
        '[shell]\nsandbox = "off"\nkill_daemons = false\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    options = options_for("kernel")
    outside: subprocess.Popen[bytes] | None = None
    async with lsp_session(root, options) as client:
        if writer == "the test's process":
            outside = subprocess.Popen(["sh", "-c", OUTSIDE], cwd=root)
        else:
            daemon = f"nohup sh -c '{OUTSIDE}' >/dev/null 2>&1 &"
            left = await lsp_call(client, "bash", {"command": daemon}, callId="c-1")
            assert not left["isError"], text_of(left)
        command = "touch trigger && while ! grep -q outside b.txt; do sleep 0.05; done"
        done = await lsp_call(
            client, "bash", {"command": command, "timeout_ms": 20_000}, callId="c-2"
        )
        assert not done["isError"], text_of(done)
        if outside is not None:
            assert outside.wait(timeout=60) == 0

        found = listed_by_call(await checkpoints(client))
        assert changes(found["c-2"]) == {("created", "trigger", None), ("modified", "b.txt", None)}

        from_shell = await asyncio.to_thread(toolhost_cli, root, "revert", "c-2")
        assert from_shell.returncode == 1, from_shell.stderr  # one file left: it asks
        assert "Reverted 1 file(s) of call c-2.\n  trigger\n" in from_shell.stdout
        assert f"Not reverted (1):\n  b.txt: {UNKNOWN_WRITER}" in from_shell.stdout
        assert not (root / "trigger").exists()
        assert (root / "b.txt").read_text() == "b\noutside\n"

        held = await revert(client, "c-2")
        assert held["reverted"] == []
        [conflict] = held["conflicts"]
        assert conflict["path"] == "b.txt" and UNKNOWN_WRITER in conflict["reason"]
        assert "(CLI: toolhost revert --include-shared)" in held["text"]
        assert (root / "b.txt").read_text() == "b\noutside\n"

        asked = await revert(client, "c-2", includeShared=True)
        assert asked["reverted"] == ["b.txt"], asked
        assert (root / "b.txt").read_text() == "b\n"
