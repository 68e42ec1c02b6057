"""The checkpoint engine in-process: shadow repository, bounds, large files, revert rules."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.records import FileRecord
from lsp_server.checkpoints.restore import Present, Put, Refusal, decide
from lsp_server.checkpoints.shadow.tree_changes import Entry
from lsp_server.config.tree import CheckpointsConfig, Limits
from lsp_server.fs.workspace import Workspace
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.reverts import Reverter
from lsp_server.runtime.sessions.observations import FileLocks, Observations
from tests.checkpoints.snapshots import tree_state


def engine(root: Path, state: Path, **settings: object) -> tuple[Checkpoints, Reverter]:
    config = CheckpointsConfig(**settings)  # type: ignore[arg-type]
    workspace = Workspace([root])
    checkpoints = Checkpoints(workspace, config, state)
    files = FileService(workspace, Observations(), Limits(), None)
    return checkpoints, Reverter(checkpoints, files, FileLocks())


async def run_checkpointed(
    checkpoints: Checkpoints, call_id: str, command: str, root: Path
) -> None:
    window = await checkpoints.before_command(call_id, "s", "bash", command)
    subprocess.run(command, shell=True, cwd=root, check=True)
    await checkpoints.after_command(window)
    await checkpoints.settle()


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.slow
async def test_the_state_folder_stays_within_the_budget(tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    budget_mb = 2
    checkpoints, _ = engine(root, state, budget_mb=budget_mb)
    sizes = []
    for n in range(40):
        # 256 KiB of fresh random bytes each time: nothing compresses or repeats.
        command = f"head -c 262144 /dev/urandom > data{n % 3}.bin"
        await run_checkpointed(checkpoints, f"c-{n}", command, root)
        sizes.append(folder_bytes(state))
    listed = await checkpoints.listed(limit=1000)
    assert 0 < len(listed) < 40  # the oldest went first ...
    assert listed[-1].checkpoint.call_id != "c-0" and listed[0].checkpoint.call_id == "c-39"
    # ... and the folder never held much more than the budget (plus the current files).
    assert max(sizes) < budget_mb * 1024 * 1024 + 3 * 262144 + 512 * 1024, sizes


async def test_checkpoints_older_than_the_age_limit_are_dropped(tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    checkpoints, _ = engine(root, state, max_age_days=1.0)
    await run_checkpointed(checkpoints, "c-old", "echo 1 > a.txt", root)
    store = checkpoints.store(root.resolve())
    assert store.trim(checkpoints.bounds(), now=store.all()[0].ended + 2 * 86400) == 1
    assert await checkpoints.listed() == []


async def test_a_file_over_the_size_limit_is_recorded_but_not_stored(tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    big = root / "big.bin"
    big.write_bytes(os.urandom(3 * 1024 * 1024))
    (root / "small.txt").write_text("small\n")
    checkpoints, reverter = engine(root, state, max_file_bytes=1024 * 1024)
    await run_checkpointed(checkpoints, "c-rm", "rm big.bin small.txt", root)
    [listed] = await checkpoints.listed()
    by_path = {f.path: f for f in listed.checkpoint.files}
    assert by_path["big.bin"].change == "deleted" and by_path["big.bin"].not_stored
    assert not by_path["small.txt"].not_stored
    assert folder_bytes(state) < 1024 * 1024  # the 3 MiB never stayed in the state folder
    outcome = await reverter.revert("c-rm")
    assert outcome.reverted == ["small.txt"]
    [conflict] = outcome.conflicts
    assert conflict.path == "big.bin" and "cannot be restored" in conflict.reason
    assert "3145728 bytes" in conflict.reason


async def test_a_large_file_that_changes_is_noticed(tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    (root / "big.bin").write_bytes(b"x" * 2_000_000)
    checkpoints, _ = engine(root, state, max_file_bytes=1_000_000)
    await run_checkpointed(checkpoints, "c-1", "echo a > a.txt", root)
    await run_checkpointed(checkpoints, "c-2", "printf y >> big.bin", root)
    await run_checkpointed(checkpoints, "c-3", "rm big.bin", root)
    listed = {item.checkpoint.call_id: item.checkpoint.files for item in await checkpoints.listed()}
    assert [(f.path, f.change) for f in listed["c-2"]] == [("big.bin", "modified")]
    assert [(f.path, f.change) for f in listed["c-3"]] == [("big.bin", "deleted")]


async def test_nested_repositories_symlinks_and_modes(tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root / "vendor")], check=True)  # no commit
    (root / "tool").write_text("#!/bin/sh\n")
    (root / "link").symlink_to("tool")
    before = tree_state(root)
    checkpoints, reverter = engine(root, state)
    await run_checkpointed(
        checkpoints, "c-1", "chmod +x tool && rm link && ln -s elsewhere link2", root
    )
    [listed] = await checkpoints.listed()
    assert {(f.path, f.change) for f in listed.checkpoint.files} == {
        ("tool", "modified"),
        ("link", "deleted"),
        ("link2", "created"),
    }
    outcome = await reverter.revert("c-1")
    assert outcome.conflicts == []
    assert tree_state(root) == before
    assert os.readlink(root / "link") == "tool"


# -- the revert rules, without git --------------------------------------------------------


def entry(data: bytes, mode: int = 0o100644) -> Entry:
    return Entry(Present.of(data, mode).oid, mode)


def merge_never(current: bytes, base: bytes, other: bytes) -> bytes | None:
    return None


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (b"after\n", [Put("f", b"before\n", 0o100644)]),
        (b"before\n", None),  # already as before
        (None, Refusal),  # deleted since
        (b"someone else\n", Refusal),  # overlapping change (the merge says so)
    ],
)
def test_a_modified_file(now: bytes | None, expected: object) -> None:
    record = FileRecord("f", "modified", entry(b"before\n"), entry(b"after\n"))
    blobs = {entry(b"before\n").oid: b"before\n", entry(b"after\n").oid: b"after\n"}
    current = Present.of(now, 0o100644) if now is not None else None
    decision = decide(record, {"f": current}, blobs, merge_never)
    if expected is Refusal:
        assert isinstance(decision, Refusal)
    elif isinstance(expected, list):
        assert isinstance(decision, list)
        assert [(p.path, p.data, p.mode) for p in decision] == [
            (p.path, p.data, p.mode) for p in expected
        ]
    else:
        assert decision is expected


def test_a_mode_the_user_changed_since_is_kept() -> None:
    record = FileRecord("f", "modified", entry(b"a\n"), entry(b"b\n"))
    blobs = {entry(b"a\n").oid: b"a\n", entry(b"b\n").oid: b"b\n"}
    decision = decide(record, {"f": Present.of(b"b\n", 0o100755)}, blobs, merge_never)
    assert isinstance(decision, list) and decision[0].mode == 0o100755


def test_a_created_file_changed_since_is_not_removed() -> None:
    record = FileRecord("new", "created", None, entry(b"made\n"))
    blobs = {entry(b"made\n").oid: b"made\n"}
    decision = decide(
        record, {"new": Present.of(b"made, then edited\n", 0o100644)}, blobs, merge_never
    )
    assert isinstance(decision, Refusal)
    assert "+made, then edited" in decision.diff


async def test_ten_writers_at_once_in_a_fresh_state_folder(tmp_path: Path) -> None:
    """The first calls of a server race to create the shadow repository."""
    from tests.helpers import call_tool, make_runtime

    root = tmp_path / "ws"
    root.mkdir()
    runtime = make_runtime(root)
    results = await asyncio.gather(
        *(
            call_tool(runtime, "write_file", {"path": f"gen/f{i}.txt", "content": f"{i}\n"})
            for i in range(10)
        )
    )
    assert [r.content[0]["text"] for r in results if r.is_error] == []
    checkpoints = runtime.services.get(Checkpoints)
    assert len(await checkpoints.listed()) == 10


@pytest.mark.slow
async def test_the_shadow_index_is_split_and_keeps_one_shared_index(tmp_path: Path) -> None:
    """A snapshot of a few files writes a small index beside a shared one (target 5 of
    issue 28); when many files are added git writes a new shared index, and the one it
    replaced is gone at once: checkpoints still record and revert every file."""
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    for n in range(300):
        (root / f"f{n}.txt").write_text(f"{n}\n")
    checkpoints, reverter = engine(root, state)
    await run_checkpointed(checkpoints, "c-0", "echo first > f0.txt", root)
    [shared] = list(state.rglob("sharedindex.*"))  # (files this new stay in the split part)
    seen = {shared.name}
    for n in range(1, 4):  # 200 files changed and 200 new: over git's 20 % of entries
        command = f"for i in $(seq 0 199); do echo {n} >> f$i.txt; echo {n} > n{n}-$i.txt; done"
        await run_checkpointed(checkpoints, f"c-{n}", command, root)
        [shared] = list(state.rglob("sharedindex.*"))
        seen.add(shared.name)
    assert len(seen) == 4  # a new shared index each time, and only the newest kept
    listed = {item.checkpoint.call_id: item.checkpoint.files for item in await checkpoints.listed()}
    assert len(listed["c-3"]) == 400
    outcome = await reverter.revert("c-3")
    assert len(outcome.reverted) == 400 and not outcome.conflicts
    assert not (root / "n3-0.txt").exists() and (root / "n2-0.txt").read_text() == "2\n"
    assert (root / "f5.txt").read_text() == "5\n1\n2\n"
    assert (root / "f250.txt").read_text() == "250\n"
