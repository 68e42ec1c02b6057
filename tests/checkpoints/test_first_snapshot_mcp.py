"""A folder outside git over MCP, as a model meets it: `toolhost mcp` as a subprocess, a
raw client, the first `bash` call sent while the root's first snapshot is still being taken.
Its result says it has no checkpoint and what that means for its revert; the user's
`toolhost revert` of it finds none and says why; the command after the snapshot has a
checkpoint and reverts. (The snapshot's length on 200,000 files is simulated at CI size:
the server's first snapshot waits for the test's go file, and the wait is lowered.)"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.checkpoints.test_root_budget import make_tree
from tests.mcp.clients import RawMcp, toolhost_command

pytestmark = pytest.mark.timeout(180)

HELD = """
import sys, time
from pathlib import Path
from lsp_server.checkpoints import first_snapshot
go, done = Path(sys.argv[1]), Path(sys.argv[2])
first_snapshot.FIRST_WAIT = 0.2
first_snapshot.SMALL_ROOT = 0
taken = first_snapshot.FirstSnapshots._run

def held(self, root, job):
    while not go.exists():
        time.sleep(0.05)
    taken(self, root, job)
    done.touch()

first_snapshot.FirstSnapshots._run = held
from lsp_server.cli import main
sys.exit(main(sys.argv[3:]))
"""


def environment(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config" / "toolhost"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[policy]\nmode = "bypass"\n')
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    env.pop("TOOLHOST_STATE_DIR", None)
    return env


async def bash(client: RawMcp, command: str) -> tuple[str, str]:
    """(the result's text, its call id)."""
    answer = await client.request("tools/call", {"name": "bash", "arguments": {"command": command}})
    result: dict[str, Any] = answer["result"]
    assert not result.get("isError"), result
    text = "\n".join(part.get("text", "") for part in result["content"])
    return text, result["_meta"]["toolhost"]["callId"]


def revert(call_id: str, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [*toolhost_command(), "revert", call_id, "--root", str(root)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


async def test_a_command_before_the_first_snapshot_says_what_its_revert_can_do(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plain"
    make_tree(root, 60, 50)  # 3,000 files, no git
    env = environment(tmp_path)
    go, done = tmp_path / "go", tmp_path / "done"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HELD,
        str(go),
        str(done),
        "mcp",
        "--root",
        str(root),
        "--attach",
        "never",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=root,
        env=env,
    )
    client = RawMcp(process)
    try:
        await client.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "first-snapshot-test", "version": "0"},
            },
        )
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        first, first_id = await bash(client, "echo x >> d0/e0/f0.txt")
        assert (
            f"[no checkpoint of {root}: the first snapshot of this root is still being taken"
        ) in first
        assert "this command has no checkpoint, so a revert cannot undo what it changes" in first
        assert "unless the root turns out over the budget" in first
        again, _ = await bash(client, "echo x >> d0/e0/f2.txt")  # still under way: said again
        assert "the first snapshot of this root is still being taken" in again
        go.touch()
        for _ in range(1200):  # the snapshot's end, not a timing
            if done.exists():
                break
            await asyncio.sleep(0.05)
        assert done.exists()
        second, second_id = await bash(client, "echo y >> d0/e0/f1.txt")
        assert "no checkpoint" not in second and "snapshot" not in second
        assert client.process.stdin is not None and client.process.stderr is not None
        client.process.stdin.close()
        err = (await asyncio.wait_for(client.process.stderr.read(), 60)).decode()
    finally:
        await client.close()
    assert "Traceback" not in err
    refused = revert(first_id, root, env)
    assert refused.returncode == 2
    assert "its first snapshot under way" in refused.stderr
    assert (root / "d0/e0/f0.txt").read_text() == "0 0\nx\n"
    reverted = revert(second_id, root, env)
    assert reverted.returncode == 0, reverted.stderr
    assert (root / "d0/e0/f1.txt").read_text() == "0 1\n"
    assert (root / "d0/e0/f0.txt").read_text() == "0 0\nx\n"  # the first's change stays


def test_the_wait_is_shared_by_the_commands_under_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command sent while the first snapshot still runs waits only what is left of
    FIRST_WAIT since the snapshot started, not FIRST_WAIT again."""
    from lsp_server.checkpoints import first_snapshot
    from lsp_server.checkpoints.watching.root_budget import Tally

    monkeypatch.setattr(first_snapshot, "SMALL_ROOT", 0)
    waits: list[float | None] = []

    class Recorded(first_snapshot.threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            waits.append(timeout)
            return False

    job = first_snapshot.Job(Tally(10, 10, 60.0), background=True)
    job.started = time.monotonic() - first_snapshot.FIRST_WAIT - 1
    job.done = Recorded()
    snapshots = first_snapshot.FirstSnapshots(
        lambda root, tally: None, lambda root: job.tally, lambda root: True
    )
    snapshots._jobs[Path("/ws")] = job
    go, note = snapshots.ready(Path("/ws"))
    assert not go and note == first_snapshot.still_running(0)
    assert waits[0] == 0.0


def test_a_root_still_being_measured_is_not_waited_for_past_last_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past FIRST_WAIT a command waits on only for a root measured small (its count stopped
    growing); one whose count still grows (a large root being measured on a busy machine)
    is not waited for past LAST_WAIT. (The measure is simulated: a thread counts.)"""
    from lsp_server.checkpoints import first_snapshot
    from lsp_server.checkpoints.watching.root_budget import Tally

    monkeypatch.setattr(first_snapshot, "FIRST_WAIT", 0.05)
    monkeypatch.setattr(first_snapshot, "LAST_WAIT", 0.1)
    monkeypatch.setattr(first_snapshot, "SMALL_ROOT", 10**9)
    stop = first_snapshot.threading.Event()

    def counting(root: Path, tally: Tally) -> None:
        while not stop.wait(0.01):
            tally.files += 1

    snapshots = first_snapshot.FirstSnapshots(
        counting, lambda root: Tally(10**9, 1 << 50, 600.0), lambda root: True
    )
    try:
        go, note = snapshots.ready(Path("/large"))  # would wait for ever without the cap
        assert not go and note is not None and "still being taken" in note
    finally:
        stop.set()
    # A root whose count stopped (measured small) is waited for until its snapshot is done.
    measured = first_snapshot.threading.Event()

    def small(root: Path, tally: Tally) -> None:
        tally.files = 3
        measured.wait(60)

    snapshots = first_snapshot.FirstSnapshots(
        small, lambda root: Tally(10**9, 1 << 50, 600.0), lambda root: True
    )
    timer = first_snapshot.threading.Timer(0.5, measured.set)
    timer.start()
    go, note = snapshots.ready(Path("/small"))
    timer.join()
    assert go and note is None


def test_a_small_root_whose_measure_started_late_is_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A measure that stalled past LAST_WAIT (its thread waited: another toolhost's first
    snapshot held the repository, CI's three agents at once) and then counted a small root
    at once grew a single time: the root is small, and the command waits for its snapshot
    instead of running without a checkpoint. (The measure is simulated: a thread counts.)"""
    from lsp_server.checkpoints import first_snapshot
    from lsp_server.checkpoints.watching.root_budget import Tally

    monkeypatch.setattr(first_snapshot, "FIRST_WAIT", 0.05)
    monkeypatch.setattr(first_snapshot, "LAST_WAIT", 0.1)
    counted = first_snapshot.threading.Event()

    def late(root: Path, tally: Tally) -> None:
        time.sleep(0.6)  # stalled well past LAST_WAIT: several looks saw no count
        tally.files = 3
        counted.set()
        time.sleep(0.6)  # then snapshotted: the looks meanwhile see the count stay

    snapshots = first_snapshot.FirstSnapshots(
        late, lambda root: Tally(10**9, 1 << 50, 600.0), lambda root: True
    )
    go, note = snapshots.ready(Path("/small-late"))
    assert counted.is_set()
    assert go and note is None


def test_a_count_the_measure_says_is_whole_is_a_small_roots(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past LAST_WAIT, a count that grew at two looks in a row but that the measure says is
    whole (it ended under SMALL_ROOT between the two looks) is a small root's: the command
    waits for its snapshot. Each look is seen by the simulated measure, which counts
    between them."""
    from lsp_server.checkpoints import first_snapshot
    from lsp_server.checkpoints.watching.root_budget import Tally

    monkeypatch.setattr(first_snapshot, "FIRST_WAIT", 0.05)
    monkeypatch.setattr(first_snapshot, "LAST_WAIT", 0.1)
    looked = first_snapshot.threading.Semaphore(0)

    class Looked(first_snapshot.threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            looked.release()
            return super().wait(timeout)

    tally = Tally(10**9, 1 << 50, 600.0)
    job = first_snapshot.Job(tally, background=True)
    job.done = Looked()

    def measure() -> None:
        for _ in range(3):  # three looks find nothing counted (a stalled start)
            looked.acquire(timeout=60)
        tally.files = 3
        looked.acquire(timeout=60)  # one finds 3: grown once
        tally.measured = True
        tally.files = 6  # the rest at once, and whole: the next look finds it grown again
        if looked.acquire(timeout=5):  # (none comes once the command stopped waiting)
            job.done.set()

    snapshots = first_snapshot.FirstSnapshots(
        lambda root, tally: None, lambda root: tally, lambda root: True
    )
    snapshots._jobs[Path("/small")] = job
    counting = first_snapshot.threading.Thread(target=measure, daemon=True)
    counting.start()
    go, note = snapshots.ready(Path("/small"))
    counting.join(60)
    assert go and note is None
