"""Writers' checkpoints leave the call's path (issue 28, target 6): the before and after
bytes are journaled when the call answers and the shadow repository gets them in background
batches. What must hold:

- a listing or a revert issued right after a write sees it, even while the batch cannot run
  (the test holds the repository's file lock, as a `toolhost revert` in another process
  would, so the batch waits);
- a server SIGKILLed between the answers and the batch loses nothing: the next server
  replays the journal, in order, and every edit can be undone byte for byte;
- a journal replayed after a batch had already recorded part of it records nothing twice,
  and a torn last entry is dropped, the whole entries before it kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints import journal
from lsp_server.checkpoints.journal import JournalEntry, JournalFile
from lsp_server.checkpoints.records import Bounds, CheckpointStore, FileRecord, root_key
from lsp_server.checkpoints.shadow.objects import object_id
from lsp_server.checkpoints.shadow.tree_changes import Entry
from lsp_server.checkpoints.write_queue import WriteQueue, write_entries
from tests.server.raw_wire import RawPeer

pytestmark = pytest.mark.timeout(180)

BYPASS = {"policy": {"mode": "bypass"}}


def store_folder(state: Path, root: Path) -> Path:
    return state / "checkpoints" / root_key(root.resolve())


@contextlib.contextmanager
def repository_locked(state: Path, root: Path) -> Iterator[None]:
    """Hold the shadow repository's file lock (what `toolhost revert` takes): no batch can
    write into it meanwhile."""
    folder = store_folder(state, root)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


async def call(peer: RawPeer, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = await peer.request(
        "toolhost/call", {"name": name, "arguments": arguments, "session": "s"}
    )
    result: dict[str, Any] = reply["result"]
    assert not result["isError"], result
    return result


async def edit(peer: RawPeer, path: str, old: str, new: str) -> str:
    await call(peer, "read_file", {"path": path})
    result = await call(peer, "edit_file", {"path": path, "old_string": old, "new_string": new})
    call_id: str = result["callId"]
    return call_id


async def listed_ids(peer: RawPeer) -> list[str]:
    reply = await peer.request("toolhost/checkpoints", {"limit": 100})
    return [c["callId"] for c in reply["result"]["checkpoints"]]


async def while_blocked(peer: RawPeer, state: Path, root: Path, method: str, params: Any) -> Any:
    """Send `method` while the repository is locked; release the lock only if no answer
    came within a second (the bound decides when to release, nothing is asserted on it)."""
    with repository_locked(state, root):
        pending = asyncio.ensure_future(peer.request(method, params))
        await asyncio.wait({pending}, timeout=1.0)
    return (await pending)["result"]


@pytest.mark.slow
async def test_a_listing_and_a_revert_right_after_a_write_see_it(tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    (root / "a.py").write_text("value = 0\n")
    peer = await RawPeer.start(root, state, options=BYPASS)
    try:
        first = await edit(peer, "a.py", "value = 0", "value = 1")
        assert await listed_ids(peer) == [first]
        with repository_locked(state, root):
            second = await edit(peer, "a.py", "value = 1", "value = 2")
        listed = await while_blocked(peer, state, root, "toolhost/checkpoints", {"limit": 10})
        assert [c["callId"] for c in listed["checkpoints"]] == [second, first]
        with repository_locked(state, root):
            third = await edit(peer, "a.py", "value = 2", "value = 3")
        reverted = await while_blocked(
            peer, state, root, "toolhost/revert", {"callId": third, "session": "s"}
        )
        assert reverted["reverted"] == ["a.py"], reverted
        assert (root / "a.py").read_text() == "value = 2\n"
    finally:
        await peer.close()


@pytest.mark.slow
async def test_a_server_killed_before_its_batch_loses_no_checkpoint(tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    (root / "a.py").write_bytes(b"# crlf and all\r\nvalue = 0\r\n")
    (root / "b.txt").write_text("b = 0\n")
    contents = [(root / "a.py").read_bytes()]
    folder = store_folder(state, root)
    peer = await RawPeer.start(root, state, options=BYPASS)
    # The first write of a root creates its shadow repository (on the call's path).
    ids = [await edit(peer, "a.py", "value = 0", "value = 1")]
    contents.append((root / "a.py").read_bytes())
    assert await listed_ids(peer) == ids
    with repository_locked(state, root):
        for n in range(1, 4):
            ids.append(await edit(peer, "a.py", f"value = {n}", f"value = {n + 1}"))
            contents.append((root / "a.py").read_bytes())
        ids.append(await edit(peer, "b.txt", "b = 0", "b = 1"))
        # Every call has answered; the batch is stuck on the lock: kill the server now.
        peer.process.send_signal(signal.SIGKILL)
        await peer.process.wait()
    await peer.close()
    recorded = CheckpointStore(state, root.resolve(), 1 << 20).all()
    assert [c.call_id for c in recorded] == ids[:1]  # nothing more reached the repository
    journaled = [journal.decode_all(p.read_bytes()) for p in journal.journal_files(folder)]
    assert [e.call_id for entries in journaled for e in entries] == ids[1:]  # all of it here

    peer = await RawPeer.start(root, state, options=BYPASS)
    try:
        assert await listed_ids(peer) == list(reversed(ids))  # the order of the writes
        assert not journal.journal_files(folder)
        for call_id, before in zip(reversed(ids[:4]), reversed(contents[:4]), strict=True):
            reply = await peer.request("toolhost/revert", {"callId": call_id, "session": "s"})
            assert reply["result"]["reverted"] == ["a.py"], reply
            assert (root / "a.py").read_bytes() == before
        reply = await peer.request("toolhost/revert", {"callId": ids[4], "session": "s"})
        assert (root / "b.txt").read_text() == "b = 0\n"
    finally:
        await peer.close()


def entry(n: int, path: str = "a.txt") -> JournalEntry:
    before, after = f"v{n}\n".encode(), f"v{n + 1}\n".encode()
    old, new = Entry(object_id("blob", before), 0o100644), Entry(object_id("blob", after), 0o100644)
    return JournalEntry(
        call_id=f"c-{n}",
        session="s",
        tool="edit_file",
        started=1000.0 + n,
        ended=1000.5 + n,
        files=(FileRecord(path, "modified", old, new),),
        reads="disk",
        reverts=None,
        blobs={old.oid: before, new.oid: after},
    )


def fresh_store(tmp_path: Path) -> CheckpointStore:
    """An empty store for the workspace tmp_path/ws."""
    root = tmp_path / "ws"
    root.mkdir()
    store = CheckpointStore(tmp_path / "state", root, 1 << 20)
    store.ensure()
    return store


def test_a_journal_replayed_after_part_of_its_batch_records_nothing_twice(
    tmp_path: Path,
) -> None:
    store = fresh_store(tmp_path)
    entries = [entry(n) for n in range(3)]
    writer = JournalFile(store.folder)
    for item in entries:
        writer.append(journal.encode(item))
    with store.repo.locked():
        write_entries(store, entries[:2])  # the batch got this far when its process died
    closed = writer.rotate()
    assert closed is not None
    closed.release()  # the process is gone: its lock with it

    lock = threading.Lock()
    queue = WriteQueue(lambda _: store, lambda _: lock, lambda *_: None)
    assert queue.recover(tmp_path / "ws") == 1
    recorded = store.all()
    assert [c.call_id for c in recorded] == ["c-0", "c-1", "c-2"]
    assert [c.seq for c in recorded] == [1, 2, 3]
    last = recorded[-1].files[0]
    assert last.after is not None
    blobs = store.repo.read_blobs([last.before.oid, last.after.oid])  # type: ignore[union-attr]
    assert sorted(blobs.values()) == [b"v2\n", b"v3\n"]
    assert not journal.journal_files(store.folder)


def test_a_torn_last_entry_is_dropped_and_the_ones_before_kept() -> None:
    whole = [journal.encode(entry(n)) for n in range(3)]
    data = b"".join(whole)
    assert [e.call_id for e in journal.decode_all(data)] == ["c-0", "c-1", "c-2"]
    assert journal.decode_all(data)[1] == entry(1)
    torn = data[: len(whole[0]) + len(whole[1]) + len(whole[2]) // 2]
    assert [e.call_id for e in journal.decode_all(torn)] == ["c-0", "c-1"]


def test_trimming_drops_the_oldest_of_a_batch_and_keeps_the_rest_restorable(
    tmp_path: Path,
) -> None:
    store = fresh_store(tmp_path)
    entries = [entry(n) for n in range(6)]
    with store.repo.locked():
        write_entries(store, entries[:4])
        write_entries(store, entries[4:])
    refs = store.repo.git_dir / "refs" / "checkpoints"
    assert store.trim(Bounds(1e12, 1 << 30, max_checkpoints=3)) == 3
    assert [c.call_id for c in store.all()] == ["c-3", "c-4", "c-5"]
    assert store.seqs() == [4, 5, 6]
    assert sorted(p.name for p in refs.iterdir()) == [
        "batch-00000001-00000004",  # c-3 still needs it
        "batch-00000005-00000006",
    ]
    store.repo.prune()
    assert sorted(store.repo.read_blobs(blob_ids(3, 4)).values()) == [b"v3\n", b"v4\n"]
    assert store.trim(Bounds(1e12, 1 << 30, max_checkpoints=1)) == 2
    assert [p.name for p in refs.iterdir()] == ["batch-00000005-00000006"]
    store.repo.prune()
    assert store.repo.read_blobs(blob_ids(0, 3)) == {}  # nothing keeps them any more
    assert sorted(store.repo.read_blobs(blob_ids(5, 6)).values()) == [b"v5\n", b"v6\n"]
    assert store.next_seq() == 7


def blob_ids(*versions: int) -> list[str]:
    return [object_id("blob", f"v{n}\n".encode()) for n in versions]


def test_records_of_earlier_versions_are_read_and_trimmed_by_age_alone(tmp_path: Path) -> None:
    """A state folder from before batches: one indented JSON file per checkpoint."""
    store = fresh_store(tmp_path)
    old = store.add("c-old", "s", "bash", 1000.0, list(entry(0).files), label="echo")
    path = store.folder / "records" / f"{old.ref_name}.json"
    legacy = {**json.loads(path.read_text()), "ended": 2000.0}
    path.write_text(json.dumps(legacy, indent=1))
    with store.repo.locked():
        write_entries(store, [entry(1)])
    assert [c.call_id for c in store.all()] == ["c-old", "c-1"]
    # Read right, the indented record is not old yet (unreadable, it would count as old).
    assert store.trim(Bounds(100.0, 1 << 30, max_checkpoints=10), now=2050.0) == 0
    assert store.trim(Bounds(100.0, 1 << 30, max_checkpoints=1), now=1050.0) == 1
    assert [c.call_id for c in store.all()] == ["c-1"]
