"""A root that needs more inotify watches than its share, in a process that may not place a
fanotify filesystem mark (any user's), is watched by a fanotify mark per folder
(fs/fanotify_folders.py, Linux 5.13+): the first result and toolhost/status say so, no
inotify watch is held, and a later command's snapshot adds only the paths that changed,
recording what a full scan records.

The marks are real everywhere here. The missing privilege is simulated in-process (the
filesystem mark is made to fail as it does for a user), and is real in two tests: a
process with every capability dropped places folder marks, and `toolhost mcp` run that way
watches a git root through them."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from threading import Event, Thread
from typing import Any

import anyio
import pytest

from lsp_server.checkpoints import watch_start
from lsp_server.checkpoints.shadow import folder_stamps, scans
from lsp_server.checkpoints.shadow.repository import ShadowRepo
from lsp_server.checkpoints.watching import fanotify_watch, root_watchers, tree_walk
from lsp_server.checkpoints.watching.changes import Changed
from lsp_server.checkpoints.watching.fanotify_watch import NOT_RUNNING
from lsp_server.checkpoints.watching.root_budget import Tally, WatchBudget
from lsp_server.checkpoints.watching.root_watchers import RootWatchers
from lsp_server.checkpoints.watching.watcher import FROM_INDEX, TreeWatcher
from lsp_server.fs import folder_marker, inotify
from lsp_server.fs.fanotify_folders import FanotifyFolders, max_user_marks
from tests.checkpoints.test_fanotify_watch import (
    CASES,
    a_git_root_of_thousands_of_files,
    budget,
    first_command,
    first_notes,
    large_git_root_over_mcp,
    marks_placed,
    pair_beyond_inotify,
)
from tests.checkpoints.test_root_budget import make_tree
from tests.checkpoints.test_watcher import Twin, changes

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[2]
# What a process without CAP_SYS_ADMIN gets: root keeps its uid (the venv stays readable)
# but holds no capability, now or after exec.
UNPRIVILEGED = [
    "setpriv",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--securebits=+noroot,+noroot_locked,+no_setuid_fixup",
]


def unprivileged(command: list[str]) -> list[str]:
    return [*UNPRIVILEGED, *command] if os.geteuid() == 0 else command


@pytest.fixture
def no_filesystem_mark(monkeypatch: pytest.MonkeyPatch) -> None:
    """The filesystem mark fails as it does for a user (no CAP_DAC_READ_SEARCH)."""
    monkeypatch.setattr(fanotify_watch, "may_resolve_handles", lambda: False)
    monkeypatch.setattr(watch_start, "may_resolve_handles", lambda: False)
    monkeypatch.setattr(root_watchers, "may_resolve_handles", lambda: False)


def kernel_marks(pid: int) -> dict[str, int]:
    """The inotify watches and fanotify marks the process holds, as the kernel lists them."""
    held = {"inotify wd:": 0, "fanotify ino:": 0}
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            lines = info.read_text().splitlines()
        except OSError:
            continue  # closed meanwhile
        for kind in held:
            held[kind] += sum(line.startswith(kind) for line in lines)
    return held


def events(marks: FanotifyFolders) -> list[tuple[int, int, str]]:
    return [(e.wd, e.mask, e.name) for e in marks.read()]


def has(found: Iterable[tuple[int, int, str]], wd: int, name: str, bit: int) -> bool:
    return any(w == wd and n == name and m & bit for w, m, n in found)


def test_folder_marks_report_what_inotify_reports(tmp_path: Path) -> None:
    """Entries made, written, moved and removed, by the folder's wd and the entry's name,
    with inotify's bits; a marked folder removed reports DELETE_SELF then IN_IGNORED; the
    same folder marked twice keeps its wd; an unmarked folder reports nothing."""
    (tmp_path / "sub").mkdir()
    marks = FanotifyFolders()
    try:
        top = marks.add_watch(str(tmp_path))
        sub = marks.add_watch(str(tmp_path / "sub"))
        assert marks.add_watch(str(tmp_path)) == top and sub != top
        (tmp_path / "f").write_text("x")
        (tmp_path / "f").rename(tmp_path / "g")
        (tmp_path / "sub" / "h").write_text("y")
        (tmp_path / "sub" / "h").unlink()
        (tmp_path / "d").mkdir()
        found = events(marks)
        assert has(found, top, "f", inotify.IN_CREATE)
        assert has(found, top, "f", inotify.IN_MODIFY)
        assert has(found, top, "f", inotify.IN_MOVED_FROM)
        assert has(found, top, "g", inotify.IN_MOVED_TO)
        assert has(found, sub, "h", inotify.IN_CLOSE_WRITE)
        assert has(found, sub, "h", inotify.IN_DELETE)
        assert has(found, top, "d", inotify.IN_CREATE | inotify.IN_ISDIR)
        (tmp_path / "d" / "unmarked").write_text("z")
        assert events(marks) == []
        os.rmdir(tmp_path / "sub")
        found = events(marks)
        assert has(found, top, "sub", inotify.IN_DELETE)
        gone = found.index((sub, inotify.IN_DELETE_SELF | inotify.IN_ISDIR, ""))
        assert found[gone + 1] == (sub, inotify.IN_IGNORED, "")
        marks.remove_watch(top)
        (tmp_path / "after").write_text("w")
        assert events(marks) == []
    finally:
        marks.close()


def test_an_unprivileged_process_places_folder_marks(tmp_path: Path) -> None:
    """For real, in a process without any capability: the filesystem mark is refused, the
    folder marks are placed and report."""
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from lsp_server.fs.fanotify import FanotifyUnavailable, FilesystemEvents\n"
        "from lsp_server.fs.fanotify_folders import FanotifyFolders\n"
        "folder = sys.argv[1]\n"
        "try:\n"
        "    FilesystemEvents.open().watch(Path(folder))\n"
        "    print('filesystem mark placed')\n"
        "except FanotifyUnavailable as exc:\n"
        "    print('filesystem mark refused:', exc)\n"
        "marks = FanotifyFolders()\n"
        "wd = marks.add_watch(folder)\n"
        "open(os.path.join(folder, 'made'), 'w').close()\n"
        "print([(e.wd == wd, e.name) for e in marks.read()][:1])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        unprivileged([sys.executable, "-c", script, str(tmp_path)]),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"filesystem mark refused: fanotify cannot watch {tmp_path}: Operation not permitted",
        "[(True, 'made')]",
    ]


def test_a_real_overflow_asks_for_a_full_scan(tmp_path: Path) -> None:
    """More changes between two takes than the kernel's queue holds: the next take asks
    for a full scan, and the one after serves again."""
    limit_file = Path("/proc/sys/fs/fanotify/max_queued_events")
    limit = int(limit_file.read_text()) if limit_file.exists() else 16384
    assert limit <= 1_000_000, "a queue this large takes too long to fill here"
    (tmp_path / "a").mkdir()
    watcher = TreeWatcher(tmp_path, [], WatchBudget.for_marks(0.5), marks=True)
    try:
        assert watcher.start(Tally(1 << 62, 1 << 62, float("inf")))
        assert watcher.take().rescan == NOT_RUNNING
        assert watcher.folder_marks == 2 and watcher.watches == 0
        for n in range(limit + 16):
            (tmp_path / "a" / f"f{n}").touch()
        assert watcher.take().rescan == "the kernel dropped events (fanotify queue overflow)"
        (tmp_path / "a" / "f0").write_text("again")
        changed = watcher.take()
        assert changed.rescan is None and changed.paths == {"a/f0"}
    finally:
        watcher.close()


@pytest.mark.parametrize("files", [10, 1500])
def test_hard_links_are_noted_by_a_walk_that_counts_nothing(tmp_path: Path, files: int) -> None:
    """A walk measured otherwise (from the user's index) stats no file on its way; the files
    with another name (outside the root: writes there reach no watched folder) are found
    beside it, in a thread when they are many, and looked at on every take as before."""
    root = tmp_path / "root"
    make_tree(root, files // 10, 10)
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    os.link(outside, root / "linked.txt")
    watcher = TreeWatcher(root, [], WatchBudget.for_marks(0.5), marks=True)
    try:
        watcher.start(None)
        for thread in threading.enumerate():
            if thread.name == "hard links":
                thread.join(60)
        assert watcher.take().rescan == NOT_RUNNING
        outside.write_text("changed through the other name")
        assert watcher.take().paths == {"linked.txt"}
    finally:
        watcher.close()


@pytest.mark.parametrize("counting", [True, False], ids=["measuring", "measured"])
def test_a_walk_out_of_inotify_watches_goes_on_with_folder_marks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counting: bool
) -> None:
    """A first walk that runs out of its inotify share moves to folder marks where it is:
    the folders watched so far are marked anew from the list, none is listed twice, the
    inotify watches go back, and the first take asks for a scan; then events as before."""
    make_tree(tmp_path, 30, 2)  # the root, d0-d2 and e0-e29: 34 folders
    listed: list[str] = []
    scandir = os.scandir

    def counted(path: str) -> Any:
        listed.append(path)
        return scandir(path)

    monkeypatch.setattr(tree_walk.os, "scandir", counted)
    inotify_share, marks_share = WatchBudget(1.0, system_limit=10), WatchBudget.for_marks(0.5)
    watcher = TreeWatcher(tmp_path, [], inotify_share)
    watcher.spill = marks_share
    try:
        tally = Tally(1 << 62, 1 << 62, float("inf")) if counting else None
        assert watcher.start(tally)
        assert sorted(listed) == sorted(set(listed)) and len(listed) == 34
        assert watcher.marks and watcher.unavailable is None and watcher.folder_marks == 34
        assert watcher.watches == 0 and inotify_share.used == 0 and marks_share.used == 34
        assert watcher.chosen == (
            "watched through fanotify folder marks, not inotify: watching it would take "
            "more than 10 inotify watches (100% of fs.inotify.max_user_watches, 10; "
            "checkpoints.watch_share)"
        )
        if counting:
            assert tally is not None and tally.files == 60
        assert watcher.take().rescan == NOT_RUNNING
        (tmp_path / "new.txt").write_text("in the root, watched first")
        (tmp_path / "d2" / "e29" / "f0.txt").write_text("in a folder marked last")
        assert watcher.take().paths == {"new.txt", "d2/e29/f0.txt"}
    finally:
        watcher.close()
    assert marks_share.used == 0


def test_the_marks_stay_within_their_share(tmp_path: Path) -> None:
    """A root with more folders than the marks' share allows is not watched by them, and
    says which setting to raise."""
    make_tree(tmp_path, 30, 1)
    marks = WatchBudget.for_marks(0.5, system_limit=20)
    assert marks.limit == 10 and "fs.fanotify.max_user_marks" in marks.refusal()
    watcher = TreeWatcher(tmp_path, [], marks, marks=True)
    try:
        watcher.take()
        assert watcher.unavailable == (
            "the root cannot be watched (watching it would take more than 10 fanotify folder "
            "marks (50% of fs.fanotify.max_user_marks, 20; checkpoints.mark_share))"
        )
        assert marks.used == 0
    finally:
        watcher.close()


@pytest.fixture
async def twin(tmp_path: Path, no_filesystem_mark: None) -> Iterator[Twin]:  # type: ignore[misc]
    made = Twin(tmp_path)
    watchers = made.checkpoints.watchers
    watchers.budget = budget(2)  # the root, pkg and pkg/deep: 3 folders
    notes = await first_command(made.engines, made.roots)
    made.count = 1
    assert notes == first_notes(made, "watched through fanotify folder marks")
    status = made.checkpoints.status()
    [watched] = status["roots"]
    assert watched["watchedBy"].startswith("watched through fanotify folder marks")
    assert watched["watches"] == 0 and watched["folderMarks"] == 3
    assert watched["notWatched"] is None
    assert status["inotifyWatches"]["held"] == 0 and status["folderMarks"]["held"] == 3
    assert status["folderMarks"]["limit"] == int((max_user_marks() or 0) * 0.5)
    yield made
    made.close()


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__.removeprefix("test_"))
async def test_the_watcher_cases_through_folder_marks(
    twin: Twin, case: Callable[[Twin], Awaitable[None]]
) -> None:
    await case(twin)


async def test_a_git_root_of_thousands_of_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_filesystem_mark: None
) -> None:
    """The preparation at start places the marks instead of stamping the folders."""
    status = await a_git_root_of_thousands_of_files(
        tmp_path, monkeypatch, "watched through fanotify folder marks", True
    )
    assert status["folderMarks"]["held"] > 250


def held_walk(monkeypatch: pytest.MonkeyPatch, kind: type[Any]) -> tuple[Event, Event]:
    """(walking, go on): each watch `kind` places waits for `go on` (first: `walking` set)."""
    walking, go_on = Event(), Event()
    add_watch = kind.add_watch

    def held(self: Any, path: str) -> int:
        walking.set()
        go_on.wait(60)
        return int(add_watch(self, path))

    monkeypatch.setattr(kind, "add_watch", held)
    return walking, go_on


@pytest.mark.parametrize("marks", [False, True], ids=["inotify", "folder marks"])
def test_nothing_waits_for_a_watchers_first_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marks: bool
) -> None:
    """While `start` walks in another thread: a take answers at once, asking for a scan; a
    second start and a window do not wait either. The first take after the walk asks for a
    scan too (what changed before its folder was watched is in no event); then paths."""
    make_tree(tmp_path, 3, 2)
    walking, go_on = held_walk(monkeypatch, FanotifyFolders if marks else inotify.Inotify)
    share = WatchBudget.for_marks(0.5) if marks else WatchBudget(1.0)
    watcher = TreeWatcher(tmp_path, [], share, marks=marks)
    walk = Thread(target=watcher.start, args=(None,))
    walk.start()
    try:
        assert walking.wait(30)
        taken: list[Changed] = []
        taking = Thread(target=lambda: taken.append(watcher.take()))
        taking.start()
        taking.join(30)
        assert [t.rescan for t in taken] == ["the watcher is still starting (its first walk)"]
        assert watcher.starting and not watcher.start(None) and watcher.open_window() is None
        (tmp_path / "d0" / "early.txt").write_text("before its folder was watched")
    finally:
        go_on.set()
        walk.join(60)
    try:
        assert not watcher.starting and watcher.take().rescan == NOT_RUNNING
        (tmp_path / "d0" / "late.txt").write_text("watched")
        changed = watcher.take()
        assert changed.rescan is None and changed.paths == {"d0/late.txt"}
    finally:
        watcher.close()


async def test_no_command_waits_for_the_marks_walk_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_filesystem_mark: None
) -> None:
    """A git root inotify cannot hold, whose first snapshot is not seeded (as after a
    restart: the shadow index exists): the walk placing its marks at start keeps going
    (held here) while the first commands run. The first snapshot scans beside it (stamping
    the folders), the next ones look at the folders whose stamp changed, until the first
    after the walk; then only the changed paths are added. Each checkpoint is exactly the
    full scans'."""
    monkeypatch.setattr(folder_stamps, "MARGIN_NS", 0)  # (the tree was written just now)
    monkeypatch.setattr(watch_start.WatchStart, "mark_known", lambda *_: False)
    walking, go_on = held_walk(monkeypatch, FanotifyFolders)
    pair, seeded, root = pair_beyond_inotify(tmp_path)
    seeded._commands.prepare_in_background([root])
    try:
        assert await anyio.to_thread.run_sync(walking.wait, 30)
        notes = await first_command(pair.engines, pair.roots)
        [scan] = notes["scan seeded"]
        assert scan is not None
        assert scan.startswith("full scan: the watcher is still starting (its first walk)")
        pair.count = 1
        found = await pair.run("echo more >> pkg1/sub1/m1.py")
        assert changes(found) == {("pkg1/sub1/m1.py", "modified")}
        assert str(pair.scans["seeded"]).startswith("folders' stamps (")
        go_on.set()
        await marks_placed(seeded.watchers, root)
        found = await pair.run("rm pkg2/sub2/m2.py")
        assert changes(found) == {("pkg2/sub2/m2.py", "deleted")}
        assert str(pair.scans["seeded"]).startswith("folders' stamps (")
        found = await pair.run("echo n > new.local")
        assert changes(found) == {("new.local", "created")}
        assert pair.scans["seeded"] == "changed paths"
    finally:
        go_on.set()
        pair.close()


def held_marks(monkeypatch: pytest.MonkeyPatch) -> tuple[Event, Event]:
    """(marking, go on): the watches of an index's folders wait for `go on` at the first."""
    marking, go_on = Event(), Event()
    add = FanotifyFolders.add_watch_probing

    def held(self: FanotifyFolders, path: str, probe: str | None) -> tuple[int, bool, int]:
        marking.set()
        go_on.wait(60)
        return add(self, path, probe)

    monkeypatch.setattr(FanotifyFolders, "add_watch_probing", held)
    return marking, go_on


async def test_the_first_snapshot_completes_the_watch_of_the_index_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_filesystem_mark: None
) -> None:
    """A git root inotify cannot hold: at start, each folder the user's index names gets a
    folder mark, unlisted (held here). The first command's snapshot, seeded from that index,
    has git list the other names beside those marks, waits for them before `git add -u`,
    then walks the folders git listed: the root is watched whole, and the snapshot after
    the command adds only the changed paths. A name made in a folder after git listed it,
    before its mark, is found too (that folder changed since the listing began: listed
    again). Each checkpoint is exactly the full scans'."""
    marking, go_on = held_marks(monkeypatch)
    listed = Event()
    untracked_names = scans.untracked_names

    def listing(repo: Any) -> list[str]:
        try:
            return untracked_names(repo)
        finally:
            listed.set()

    monkeypatch.setattr(scans, "untracked_names", listing)
    pair, seeded, root = pair_beyond_inotify(tmp_path)
    (root / "fresh" / "deep").mkdir(parents=True)  # untracked: walked by the snapshot
    (pair.roots["scanned"] / "fresh" / "deep").mkdir(parents=True)
    seeded._commands.prepare_in_background([root])
    notes: dict[str, list[str]] = {}

    async def first() -> None:
        notes.update(await first_command(pair.engines, pair.roots))

    try:
        assert await anyio.to_thread.run_sync(marking.wait, 30)
        async with anyio.create_task_group() as group:
            group.start_soon(first)
            assert await anyio.to_thread.run_sync(listed.wait, 30)
            for each in pair.roots.values():
                (each / "pkg1" / "late.txt").write_text("after git listed pkg1\n")
            await anyio.sleep(0.3)
            assert not notes  # (the snapshot waits for the marks)
            go_on.set()
        assert notes["scan seeded"] == [
            f"full scan: {FROM_INDEX}; seeded from the repository's index"
        ]
        watcher = seeded.watchers.running(root)
        assert isinstance(watcher, TreeWatcher) and not watcher.starting
        pair.count = 1
        found = await pair.run("echo more >> pkg1/late.txt && echo n > fresh/deep/n.txt")
        assert changes(found) == {("pkg1/late.txt", "modified"), ("fresh/deep/n.txt", "created")}
        assert pair.scans["seeded"] == "changed paths"
        assert seeded.watchers.scans[root] == "changed paths"
        found = await pair.run("rm pkg2/sub2/m2.py && mkdir -p pkg3/new && echo x > pkg3/new/x")
        assert changes(found) == {("pkg2/sub2/m2.py", "deleted"), ("pkg3/new/x", "created")}
        assert seeded.watchers.scans[root] == "changed paths"
        assert seeded.status()["inotifyWatches"]["held"] == 0
    finally:
        go_on.set()
        pair.close()


async def test_a_watch_started_from_the_index_that_no_seeded_snapshot_completes_is_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_filesystem_mark: None
) -> None:
    """The index's folders are watched at start, but the first snapshot is not seeded (here:
    seeding is made to find nothing to seed from): it scans the root, and the watch is
    completed by a walk in the background instead; after the walk, and the scan its first
    take asks for, only the changed paths are added. Each checkpoint is the full scans'."""
    monkeypatch.setattr(folder_stamps, "MARGIN_NS", 0)  # (the tree was written just now)
    monkeypatch.setattr(ShadowRepo, "seed", lambda _: False)
    pair, seeded, root = pair_beyond_inotify(tmp_path)
    seeded._commands.prepare_in_background([root])
    try:
        await marks_placed(seeded.watchers, root)  # (the index's folders)
        watcher = seeded.watchers.running(root)
        assert isinstance(watcher, TreeWatcher) and watcher.partial
        notes = await first_command(pair.engines, pair.roots)
        assert notes["scan seeded"] == [f"full scan: {FROM_INDEX}"]
        for _ in range(1200):
            if not watcher.starting:
                break
            await anyio.sleep(0.05)
        assert not watcher.starting and watcher.unavailable is None
        pair.count = 1
        found = await pair.run("echo more >> pkg1/sub1/m1.py")
        assert changes(found) == {("pkg1/sub1/m1.py", "modified")}
        found = await pair.run("rm pkg2/sub2/m2.py && echo n > new.local")
        assert changes(found) == {("pkg2/sub2/m2.py", "deleted"), ("new.local", "created")}
        assert pair.scans["seeded"] == "changed paths"
    finally:
        pair.close()


@pytest.mark.parametrize("by", ["the server", "a child"])
def test_a_watch_started_from_an_index_is_whole_once_completed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by: str
) -> None:
    """The folders an index names are watched unlisted; the folders added to it since,
    then those it does not name (walked), complete the watch: from then on every change is
    reported, with no scan asked for. Until then each take asks for a scan. Many folders
    are marked by a child process (fs/folder_marker.py; here from one on)."""
    if by == "a child":
        monkeypatch.setattr(folder_marker, "CHILD_FROM", 1)
    make_tree(tmp_path, 3, 2)  # d0/e0, d0/e1, d0/e2
    (tmp_path / "untracked" / "deep").mkdir(parents=True)
    watcher = TreeWatcher(tmp_path, [], WatchBudget.for_marks(0.5), marks=True)
    try:
        assert watcher.start_known(["", "d0", "d0/e0"], [], [])
        assert watcher.partial and watcher.folder_marks == 3
        assert watcher.take().rescan == FROM_INDEX and watcher.open_window() is None
        tracked = ({"d0/e0/f0.txt"}, {"", "d0", "d0/e0", "d0/e1", "d0/e2"})
        assert watcher.complete_known(tracked[1], [])
        assert watcher.folder_marks == 5
        later = time.time_ns() + 10**10  # (no folder counts as changed since the listing)
        assert watcher.complete_untracked(["untracked"], later, tracked) == []
        assert not watcher.starting and watcher.folder_marks == 7
        for path in ("untracked/deep/a.txt", "d0/e2/b.txt", "c.txt"):
            (tmp_path / path).write_text("watched\n")
        changed = watcher.take()
        assert changed.rescan is None
        assert changed.paths == {"untracked/deep/a.txt", "d0/e2/b.txt", "c.txt"}
        assert watcher.complete_untracked([], later, tracked) is None  # (whole already)
    finally:
        watcher.close()


def test_an_index_naming_folders_outside_the_root_marks_none_of_them(tmp_path: Path) -> None:
    """The user's index is a file a command can write: its names are marked only inside
    the root."""
    root = tmp_path / "root"
    make_tree(root, 1, 1)  # d0/e0/f0.txt
    watcher = TreeWatcher(root, [], WatchBudget.for_marks(0.5), marks=True)
    try:
        assert watcher.start_known(["", "d0", "../", "d0/../..", str(tmp_path)], ["../x"], [])
        assert watcher.folder_marks == 2
    finally:
        watcher.close()


def test_names_made_before_a_folders_mark_after_the_listing_are_found(tmp_path: Path) -> None:
    """A folder whose change time, once marked, is not older than the listing of the names
    the index does not hold (less the clock's margin) is listed again: what it holds that the
    index does not is handed back to the snapshot."""
    make_tree(tmp_path, 2, 1)  # d0/e0/f0.txt, d0/e1/f0.txt
    watcher = TreeWatcher(tmp_path, [], WatchBudget.for_marks(0.5), marks=True)
    try:
        listing_began = time.time_ns()
        (tmp_path / "d0" / "e1" / "late.txt").write_text("after the listing\n")
        (tmp_path / "d0" / "e1" / "sub").mkdir()
        assert watcher.start_known(["", "d0", "d0/e0", "d0/e1"], [], [])
        tracked = ({"d0/e0/f0.txt", "d0/e1/f0.txt"}, {"", "d0", "d0/e0", "d0/e1"})
        missed = watcher.complete_untracked([], listing_began, tracked)
        assert missed is not None and {"d0/e1/late.txt", "d0/e1/sub"} <= set(missed)
        assert not set(missed) & (tracked[0] | tracked[1])
        (tmp_path / "d0" / "e1" / "sub" / "x").write_text("watched: walked\n")
        assert watcher.take().paths == {"d0/e1/sub/x"}
    finally:
        watcher.close()


def test_a_walk_started_ahead_waits_while_a_snapshot_scans(tmp_path: Path) -> None:
    """The walk placing marks at start goes on only while no snapshot runs: a command's
    scan has the cores (the walk's own priority is lowered too)."""
    make_tree(tmp_path, 3, 2)
    watchers = RootWatchers(marks_budget=WatchBudget.for_marks(0.5))
    watcher = TreeWatcher(tmp_path, [], watchers.marks_budget, marks=True)
    with watchers.scanning():
        walk = Thread(target=watcher.start, args=(None, watchers.quiet))
        walk.start()
        walk.join(0.5)
        assert walk.is_alive() and watcher.starting and watcher.folder_marks == 0
    walk.join(60)
    try:
        assert not walk.is_alive() and watcher.folder_marks == 5
    finally:
        watcher.close()


def test_commands_back_to_back_cannot_keep_a_walk_from_ending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk waits for snapshots YIELD_SECONDS in all, then goes on beside them: an agent
    running commands back to back would otherwise keep it from ending, and each of their
    snapshots would scan the root."""
    monkeypatch.setattr(tree_walk, "YIELD_SECONDS", 0.3)
    make_tree(tmp_path, 3, 2)
    watchers = RootWatchers(marks_budget=WatchBudget.for_marks(0.5))
    watcher = TreeWatcher(tmp_path, [], watchers.marks_budget, marks=True)
    try:
        with watchers.scanning():  # (one long run of snapshots)
            walk = Thread(target=watcher.start, args=(None, watchers.quiet))
            walk.start()
            walk.join(60)
            assert not walk.is_alive() and watcher.folder_marks == 5
    finally:
        watcher.close()


async def test_a_root_the_marks_cannot_hold_either_is_not_walked_for_them(
    tmp_path: Path, no_filesystem_mark: None
) -> None:
    """280 folders, 50 inotify watches and 50 folder marks left: not watched, said once,
    and no later snapshot walks the root to place marks it cannot hold."""
    pair, seeded, root = pair_beyond_inotify(tmp_path)
    seeded.watchers.marks_budget = WatchBudget.for_marks(0.5, system_limit=101)
    seeded._commands.prepare_in_background([root])
    try:
        notes = await first_command(pair.engines, pair.roots)
        [note] = notes["seeded"]
        assert "the root is not watched (watching it would take more than 50 inotify" in note
        pair.count = 1
        found = await pair.run("echo more >> pkg1/sub1/m1.py")
        assert changes(found) == {("pkg1/sub1/m1.py", "modified")}
        watcher = seeded.watchers.running(root)
        assert isinstance(watcher, TreeWatcher) and not watcher.marks
        assert seeded.watchers.marks_budget.used == 0
    finally:
        pair.close()


async def test_over_mcp_an_unprivileged_server_watches_a_large_git_root(
    tmp_path: Path,
) -> None:
    """As a user meets it: `toolhost mcp` without any capability; the first result says
    folder marks watch the root, and the server holds them, not inotify watches."""

    def marked(pid: int) -> None:
        held = kernel_marks(pid)
        assert held["inotify wd:"] == 0 and held["fanotify ino:"] > 300, held

    await large_git_root_over_mcp(
        tmp_path,
        UNPRIVILEGED if os.geteuid() == 0 else [],
        "watched through fanotify folder marks",
        marked,
    )
