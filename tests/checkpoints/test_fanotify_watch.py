"""A root that needs more inotify watches than its share is watched through one fanotify
filesystem mark where this process may place one (checkpoints/watching/fanotify_watch.py): the
first result and toolhost/status say so, no inotify watch is held, and a later command's
snapshot adds only the paths that changed, recording what a full scan records.

The watcher cases of test_watcher.py run again here with the share lowered so that the
root does not fit (the same twin workspaces: one watched, one by full scans); a git root
of a few thousand files takes the route of a seeded first snapshot. Needs CAP_SYS_ADMIN
and CAP_DAC_READ_SEARCH (root: CI and this machine); elsewhere skipped, and the roots
stay unwatched (test_root_budget.py)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints.shadow.repository import ShadowRepo
from lsp_server.checkpoints.watching import fanotify_watch
from lsp_server.checkpoints.watching.fanotify_watch import (
    NOT_RUNNING,
    FanotifyWatcher,
    may_resolve_handles,
)
from lsp_server.checkpoints.watching.root_budget import WatchBudget, max_user_watches
from lsp_server.checkpoints.watching.root_watchers import RootWatchers
from lsp_server.checkpoints.watching.watcher import FROM_INDEX, TreeWatcher
from lsp_server.fs import fanotify
from lsp_server.fs.fanotify import FanotifyUnavailable, FilesystemEvents, FsEvent
from tests.checkpoints import test_watcher as watcher_cases
from tests.checkpoints.snapshots import tree_state
from tests.checkpoints.test_first_snapshot_mcp import bash, environment, revert
from tests.checkpoints.test_root_budget import make_tree
from tests.checkpoints.test_seeded_snapshot import Pair
from tests.checkpoints.test_watcher import Twin, changes
from tests.mcp.clients import RawMcp, toolhost_command

pytestmark = pytest.mark.timeout(180)

OVERFLOW = "full scan: the kernel dropped events (fanotify queue overflow)"


def require_fanotify() -> None:
    try:
        FilesystemEvents.open().close()
    except FanotifyUnavailable as exc:
        pytest.skip(f"fanotify is not permitted here ({exc})")
    if not may_resolve_handles():
        pytest.skip("fanotify's handles need CAP_DAC_READ_SEARCH")


def budget(watches: int) -> WatchBudget:
    """A share of the system's inotify watches that leaves exactly `watches`."""
    return WatchBudget((watches + 0.5) / max_user_watches())


async def first_command(engines: dict[str, Any], roots: dict[str, Path]) -> dict[str, list[str]]:
    """Each engine's first command (`true`, call c-1); the notes of its result (and how
    the snapshot before it was taken, under "scan")."""
    notes = {}
    for name, root in roots.items():
        engine = engines[name]
        window = await engine.before_command("c-1", "s", "bash", "true")
        notes[f"scan {name}"] = [engine.watchers.scans.get(root)]
        subprocess.run(["true"], cwd=root, check=True)
        await engine.after_command(window)
        await engine.settle()
        notes[name] = window.notes
    return notes


def first_notes(made: Twin, watched_by: str) -> dict[str, list[str]]:
    """What `first_command` finds in a twin whose watched root does not fit in 2 inotify
    watches and is watched instead as `watched_by` says."""
    return {
        "watched": [
            f"[checkpoints of {made.root}: {watched_by}, not inotify: watching it would take "
            f"more than 2 inotify watches ({made.checkpoints.watchers.budget.share:.0%} of "
            f"fs.inotify.max_user_watches, {max_user_watches():,}; checkpoints.watch_share)]"
        ],
        "scanned": [],
        "scan watched": [f"full scan: {NOT_RUNNING}"],
        "scan scanned": ["full scan: watching is off"],
    }


@pytest.fixture
async def twin(tmp_path: Path):  # type: ignore[no-untyped-def]
    require_fanotify()
    made = Twin(tmp_path)
    made.checkpoints.watchers.budget = budget(2)  # the root, pkg and pkg/deep: 3 folders
    notes = await first_command(made.engines, made.roots)
    made.count = 1
    assert notes == first_notes(made, "watched through fanotify")
    status = made.checkpoints.status()
    [watched] = status["roots"]
    assert watched["watchedBy"].startswith("watched through fanotify")
    assert watched["watches"] == 0 and watched["notWatched"] is None
    assert status["inotifyWatches"]["held"] == 0
    yield made
    made.close()


async def test_inotify_where_the_root_fits(tmp_path: Path) -> None:
    """fanotify is only the fallback: a root within the share is watched by inotify."""
    require_fanotify()
    made = Twin(tmp_path)
    try:
        notes = await first_command(made.engines, made.roots)
        assert notes["watched"] == []
        [watched] = made.checkpoints.status()["roots"]
        assert watched["watchedBy"] == "inotify" and watched["watches"] == 3
    finally:
        made.close()


async def test_without_the_privileges_the_root_stays_unwatched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's process (no CAP_DAC_READ_SEARCH, simulated: this one has it) on a kernel
    without folder marks (before 5.13; with them: test_fanotify_folders.py) keeps the root
    unwatched, says why once, and snapshots it by its folders' stamps."""
    monkeypatch.setattr(fanotify_watch, "may_resolve_handles", lambda: False)
    made = Twin(tmp_path)
    made.checkpoints.watchers.budget = budget(2)
    made.checkpoints.watchers.folder_marks = False
    try:
        notes = await first_command(made.engines, made.roots)
        [note] = notes["watched"]
        assert note.endswith(
            "; no fanotify (fanotify's handles need CAP_DAC_READ_SEARCH); each snapshot "
            "scans the whole root instead, as git status does]"
        )
        [watched] = made.checkpoints.status()["roots"]
        assert watched["watchedBy"] is None and "no fanotify" in watched["notWatched"]
    finally:
        made.close()


CASES: list[Callable[[Twin], Awaitable[None]]] = [
    watcher_cases.test_folders_made_and_filled_before_their_watch_exists,
    watcher_cases.test_a_command_in_the_real_sandbox,
    watcher_cases.test_renames_into_out_of_and_within_the_tree,
    watcher_cases.test_a_same_size_change_within_one_mtime_tick,
    watcher_cases.test_ignored_files_within_the_budget,
    watcher_cases.test_a_gitignore_change_scans_everything,
    watcher_cases.test_type_changes_temporary_files_and_nested_repositories,
    watcher_cases.test_ignored_files_left_out_get_in_when_the_budget_frees,
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__.removeprefix("test_"))
async def test_the_watcher_cases_through_fanotify(
    twin: Twin, case: Callable[[Twin], Awaitable[None]]
) -> None:
    await case(twin)


async def test_an_overflow_forces_a_full_scan(twin: Twin) -> None:
    """Through the engine: FAN_Q_OVERFLOW handed to the watcher as if from the kernel
    (a real overflow: test_a_real_overflow_asks_for_a_full_scan)."""
    watcher = twin.checkpoints.watchers.running(twin.root)
    assert isinstance(watcher, FanotifyWatcher)
    watcher.feed([FsEvent(0, fanotify.Q_OVERFLOW)])
    found = await twin.run("echo x >> tracked.txt", before=OVERFLOW)
    assert changes(found) == {("tracked.txt", "modified")}
    found = await twin.run("echo y >> tracked.txt")  # and it serves again
    assert changes(found) == {("tracked.txt", "modified")}


def test_a_real_overflow_asks_for_a_full_scan(tmp_path: Path) -> None:
    """The kernel's queue overflows for real: its reader is held off (as on a machine too
    busy to run it) while more changes than the queue holds are made."""
    require_fanotify()
    limit_file = Path("/proc/sys/fs/fanotify/max_queued_events")
    limit = int(limit_file.read_text()) if limit_file.exists() else 16384
    assert limit <= 1_000_000, "a queue this large takes too long to fill here"
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    watcher = FanotifyWatcher(root, [], "the root is not watched (a reason)")
    assert watcher.open()
    try:
        watcher.take()
        with watcher._lock:  # the reader waits for it
            for n in range(limit + 16):
                (root / "a" / f"f{n}").touch()
        assert watcher.take().rescan == "the kernel dropped events (fanotify queue overflow)"
        (root / "a" / "f0").write_text("again")
        changed = watcher.take()  # and it serves again
        assert changed.rescan is None and changed.paths == {"a/f0"}
    finally:
        watcher.close()


def pair_beyond_inotify(tmp_path: Path) -> tuple[Pair, Any, Path]:
    """Two copies of a 1,500-file repository (280 folders): (the pair, its seeded engine,
    which has 50 inotify watches left, and that engine's root); the other does not watch."""
    pair = Pair(tmp_path, files=1500)
    seeded = pair.engines["seeded"]
    seeded.watchers.budget = budget(50)
    pair.engines["scanned"].watchers.enabled = False
    return pair, seeded, pair.roots["seeded"]


async def marks_placed(watchers: RootWatchers, root: Path) -> None:
    """Until the walk placing folder marks at start (or the watches of the index's folders)
    has placed them all."""
    for _ in range(1200):
        watcher = watchers.running(root)
        if isinstance(watcher, TreeWatcher) and watcher.folder_marks and not watcher.walking:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the folder marks were not placed in 60 s")


async def a_git_root_of_thousands_of_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched_by: str, at_start: bool
) -> dict[str, Any]:
    """Seeded from the user's index (1,500 files), measured from it (280 folders, 50
    watches left): the first result says how the root is watched (`watched_by`), the first
    snapshot is the seeded scan, a later one adds only what changed, and reverts.
    `at_start`: prepared as at the server's start, with the share lowered. Returns
    toolhost/status's checkpoints after the later command."""
    added: list[set[str]] = []
    snapshot_paths = ShadowRepo.snapshot_paths

    def counted(repo: ShadowRepo, paths: Iterable[str]) -> str:
        added.append(set(paths))
        return snapshot_paths(repo, added[-1])

    monkeypatch.setattr(ShadowRepo, "snapshot_paths", counted)
    pair, seeded, root = pair_beyond_inotify(tmp_path)
    if at_start:
        seeded._commands.prepare_in_background([root])
        await marks_placed(seeded.watchers, root)  # (a command meanwhile: tests below)
    try:
        before = tree_state(root)
        notes = await first_command(pair.engines, pair.roots)
        assert len(notes["seeded"]) == 1 and f"{watched_by}, not inotify" in notes["seeded"][0]
        started = FROM_INDEX if at_start else NOT_RUNNING
        assert notes["scan seeded"] == [f"full scan: {started}; seeded from the repository's index"]
        pair.count = 1
        found = await pair.run(
            "echo more >> pkg1/sub1/m1.py && rm pkg2/sub2/m2.py && mkdir -p fresh/a && "
            "echo n > fresh/a/n.txt && mv pkg3/sub3/m3.py moved.py && echo s >> new.local"
        )
        assert changes(found) == {
            ("pkg1/sub1/m1.py", "modified"),
            ("pkg2/sub2/m2.py", "deleted"),
            ("fresh/a/n.txt", "created"),
            ("moved.py", "moved"),
            ("new.local", "created"),
        }
        assert pair.scans["seeded"] == "changed paths"
        assert seeded.watchers.scans[root] == "changed paths"
        assert added[-2:] == [
            set(),  # before the command: nothing changed since the first snapshot
            {
                "pkg1/sub1/m1.py",
                "pkg2/sub2/m2.py",
                "fresh",  # made with what is below it: one path
                "pkg3/sub3/m3.py",
                "moved.py",
                "new.local",
            },
        ]
        status = seeded.status()
        assert status["inotifyWatches"]["held"] == 0
        await pair.revert("seeded", "c-2")
        assert tree_state(root) == before
        return status
    finally:
        pair.close()


async def test_a_git_root_of_thousands_of_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_fanotify()
    await a_git_root_of_thousands_of_files(tmp_path, monkeypatch, "watched through fanotify", False)


def test_only_the_roots_changes_are_kept(tmp_path: Path) -> None:
    """The mark hears the whole file system: paths outside the root and in a kept-out
    folder (the state folder) are dropped, until a folder moves in; a window holds the
    names made at any depth; the root moved away asks for a full scan."""
    require_fanotify()
    root = tmp_path / "root"
    (root / "state").mkdir(parents=True)
    (root / "a").mkdir()
    watcher = FanotifyWatcher(root, ["state"], "the root is not watched (a reason)")
    assert watcher.chosen == "watched through fanotify, not inotify: a reason"
    assert watcher.open()
    try:
        assert watcher.take().rescan == NOT_RUNNING
        (root / "state" / "x").write_text("x")
        (tmp_path / "outside").write_text("y")
        window = watcher.open_window()
        assert window is not None
        (root / "a" / "f").write_text("z")
        (root / "b" / "c").mkdir(parents=True)
        (root / "b" / "c" / ".envrc").write_text("e")
        changed = watcher.take()
        assert changed.rescan is None
        assert changed.paths == {"a/f", "b"}
        assert changed.created == changed.paths
        assert watcher.close_window(window).created == {"a/f", "b", "b/c", "b/c/.envrc"}
        # A folder whose events were dropped (elsewhere) moves in: its events count now.
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "e").write_text("1")
        assert watcher.take().paths == set()
        (tmp_path / "elsewhere").rename(root / "moved_in")
        assert watcher.take().paths == {"moved_in"}
        (root / "moved_in" / "e").write_text("2")
        assert watcher.take().paths == {"moved_in/e"}
        os.rename(root, tmp_path / "moved")
        assert watcher.take().rescan == "the root or a folder above it was moved or removed"
    finally:
        watcher.close()


async def large_git_root_over_mcp(
    tmp_path: Path, prefix: list[str], watched_by: str, server: Callable[[int], None]
) -> None:
    """`toolhost mcp` (run behind `prefix`) as a subprocess, with the user's share of
    watches lowered so that a git root of 600 files in 330 folders does not fit: the first
    result says how it is watched (`watched_by`), `server(pid)` looks at the process after
    a later command, whose checkpoint reverts with `toolhost revert`."""
    root = tmp_path / "ws"
    make_tree(root, 300, 2)
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    env = environment(tmp_path)
    share = 20.5 / max_user_watches()
    with (tmp_path / "config" / "toolhost" / "config.toml").open("a") as config:
        config.write(f"\n[checkpoints]\nwatch_share = {share!r}\n")
    process = await asyncio.create_subprocess_exec(
        *prefix,
        *toolhost_command(),
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
                "clientInfo": {"name": "fanotify-test", "version": "0"},
            },
        )
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        first, _ = await bash(client, "echo x >> d0/e0/f0.txt")
        assert (
            f"[checkpoints of {root}: {watched_by}, not inotify: watching it would take more "
            "than 20 inotify watches"
        ) in first
        later, later_id = await bash(client, "echo y >> d1/e10/f1.txt && rm d2/e20/f0.txt")
        assert "checkpoints of" not in later and "no checkpoint" not in later
        server(process.pid)
        assert client.process.stdin is not None and client.process.stderr is not None
        client.process.stdin.close()
        err = (await asyncio.wait_for(client.process.stderr.read(), 60)).decode()
    finally:
        await client.close()
    assert "Traceback" not in err
    reverted = revert(later_id, root, env)
    assert reverted.returncode == 0, reverted.stderr
    assert (root / "d1/e10/f1.txt").read_text() == "10 1\n"
    assert (root / "d2/e20/f0.txt").read_text() == "20 0\n"


async def test_over_mcp_a_large_git_root_is_watched_through_fanotify(tmp_path: Path) -> None:
    """As a model meets it, in a process that may place the filesystem mark (root)."""
    require_fanotify()
    await large_git_root_over_mcp(tmp_path, [], "watched through fanotify", lambda pid: None)
