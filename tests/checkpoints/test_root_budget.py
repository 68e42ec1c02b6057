"""Roots measured before their first snapshot (root_budget.py, first_snapshot.py): over the
budget, shell checkpoints stay off with one line in the first result and in the status; the
inotify watches stay within their share of fs.inotify.max_user_watches (counted by the
kernel: /proc/self/fdinfo); a root holding the state folder, other mounts and /proc are
never walked; a long first snapshot outside git never holds a command up."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints import command_snapshots, first_snapshot
from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.watching.root_budget import Tally, max_user_watches
from lsp_server.checkpoints.watching.watcher import TreeWatcher
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.fs.workspace import Workspace
from tests.checkpoints.snapshots import checkpoints
from tests.helpers import in_own_mounts, lsp_call, lsp_session, text_of

pytestmark = pytest.mark.timeout(180)


def make_tree(root: Path, folders: int, files_per_folder: int) -> None:
    for n in range(folders):
        folder = root / f"d{n // 10}" / f"e{n}"
        folder.mkdir(parents=True, exist_ok=True)
        for m in range(files_per_folder):
            (folder / f"f{m}.txt").write_text(f"{n} {m}\n")


def engine(roots: list[Path], state: Path, **settings: Any) -> Checkpoints:
    return Checkpoints(Workspace(roots), CheckpointsConfig(**settings), state)


async def command(checkpoints: Checkpoints, call_id: str, script: str, cwd: Path) -> Any:
    """Run `script` checkpointed; (its checkpoints, the notes of its result)."""
    window = await checkpoints.before_command(call_id, "s", "bash", script)
    subprocess.run(["sh", "-c", script], cwd=cwd, check=True)
    made = await checkpoints.after_command(window)
    await checkpoints.settle()
    assert window is not None
    return made, window.notes


def inotify_watches(checkpoints: Checkpoints | None = None) -> int:
    """Watches held, as the kernel lists them (/proc/self/fdinfo): on the inotify
    descriptors of `checkpoints`' watchers, or on every one of this process."""
    fds = None
    if checkpoints is not None:
        watchers = checkpoints.watchers._watchers.values()
        fds = {w._inotify.fd for w in watchers if w._inotify is not None}
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            info = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:
            continue
        if fds is None or int(fd) in fds:
            held += sum(line.startswith("inotify wd:") for line in info.splitlines())
    return held


def state_objects(state: Path) -> int:
    return sum(1 for p in state.rglob("objects/??/*"))


async def test_a_root_over_the_file_budget_gets_no_shell_checkpoints(tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    make_tree(root, 60, 50)  # 3,000 files
    checkpoints = engine([root], state, max_root_files=1000)
    made, notes = await command(checkpoints, "c-1", "echo x >> d0/e0/f0.txt", root)
    assert not made
    assert notes == [
        f"[no checkpoint of {root}: shell checkpoints are off for this root: it holds more "
        f"than 1,000 files (checkpoints.max_root_files); {first_snapshot.STAYS_OFF}]"
    ]
    assert "a revert cannot undo what commands change" in notes[0]
    made, notes = await command(checkpoints, "c-2", "echo y >> d0/e0/f0.txt", root)
    assert not made and notes == []  # said once
    status = checkpoints.status()["roots"][0]
    assert status["shellCheckpoints"].startswith("off: shell checkpoints are off for this root")
    assert state_objects(state) == 0  # nothing was hashed
    # Nothing stays watched (counted on this engine's watchers: another test's engine may
    # let go of its own watches meanwhile).
    assert inotify_watches(checkpoints) == 0
    checkpoints.watchers.close()
    # The same root within the budget: checkpoints as usual.
    checkpoints = engine([root], tmp_path / "state2", max_root_files=5000)
    made, notes = await command(checkpoints, "c-3", "echo z >> d0/e0/f0.txt", root)
    assert notes == [] and [f.path for c in made for f in c.files] == ["d0/e0/f0.txt"]
    assert checkpoints.status()["roots"][0]["files"] == 3000
    checkpoints.watchers.close()


async def test_a_root_over_the_byte_budget_and_a_seeded_git_root(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.bin").write_bytes(os.urandom(3 << 20))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    checkpoints = engine([root], tmp_path / "state", max_root_mb=2)
    made, notes = await command(checkpoints, "c-1", "echo x > new.txt", root)
    assert not made
    assert notes == [
        f"[no checkpoint of {root}: shell checkpoints are off for this root: it holds more "
        "than 2 MB (checkpoints.max_root_mb, and checkpoints.budget_mb outside git); "
        f"{first_snapshot.STAYS_OFF}]"
    ]
    checkpoints.watchers.close()


async def test_the_watches_stay_within_their_share(tmp_path: Path) -> None:
    small, large, state = tmp_path / "small", tmp_path / "large", tmp_path / "state"
    make_tree(small, 30, 2)  # 30 folders, 3 above them, the root
    make_tree(large, 300, 2)
    limit = 100
    share = (limit + 0.5) / max_user_watches()
    checkpoints = engine([small, large], state, watch_share=share)
    checkpoints.watchers.fanotify = False  # a user's: with it, test_fanotify_watch.py
    checkpoints.watchers.folder_marks = False  # before Linux 5.13: test_fanotify_folders.py
    made, notes = await command(
        checkpoints, "c-1", f"echo x >> d0/e0/f0.txt && echo y >> {large}/d1/e10/f1.txt", small
    )
    assert sorted(f.path for c in made for f in c.files) == ["d0/e0/f0.txt", "d1/e10/f1.txt"]
    assert notes == [
        f"[checkpoints of {large}: the root is not watched (watching it would take more than "
        f"{limit} inotify watches ({share:.0%} of fs.inotify.max_user_watches, "
        f"{max_user_watches():,}; checkpoints.watch_share)); each snapshot scans the whole "
        "root instead, as git status does]"
    ]
    assert inotify_watches(checkpoints) == 34 <= limit  # the small root's folders (the kernel's)
    status = checkpoints.status()
    assert status["inotifyWatches"]["held"] == 34 and status["inotifyWatches"]["limit"] == limit
    watched, not_watched = status["roots"]
    assert watched["watches"] == 34 and watched["notWatched"] is None
    assert not_watched["watches"] == 0 and "not watched" in not_watched["notWatched"]
    # The root that is not watched is still checkpointed (by its folders' stamps, as a
    # full scan would), said once.
    made, notes = await command(checkpoints, "c-2", "rm d2/e20/f0.txt", large)
    assert [f.path for c in made for f in c.files] == ["d2/e20/f0.txt"] and notes == []
    assert checkpoints.watchers.scans[large].startswith("folders' stamps")
    checkpoints.watchers.close()
    assert checkpoints.watchers.budget.used == 0


async def test_a_home_folder_root_holding_the_state_folder(tmp_path: Path) -> None:
    """The state folder inside the root (an allowed home folder): never measured, watched
    or recorded, however much it grows."""
    home = tmp_path / "home"
    state = home / ".local" / "state" / "toolhost"
    make_tree(home / "projects", 40, 10)  # 400 files
    (home / ".bashrc").write_text("export A=1\n")
    checkpoints = engine([home], state, max_root_files=500)
    for n in range(3):
        made, notes = await command(checkpoints, f"c-{n}", f"echo {n} >> .bashrc", home)
        assert notes == [] and [f.path for c in made for f in c.files] == [".bashrc"]
    assert state_objects(state) > 0
    listed = await checkpoints.listed()
    assert not any(".local" in f.path for c in listed for f in c.checkpoint.files)
    # Every folder is watched but the state folder's (.local and .local/state are).
    folders = [p for p in home.rglob("*") if p.is_dir() and state not in (p, *p.parents)]
    assert inotify_watches(checkpoints) == len(folders) + 1
    checkpoints.watchers.close()
    # Filled with more files than the budget, the state folder still does not count.
    for n in range(200):
        (state / f"filler{n}").write_text("x")
    checkpoints = engine([home], state, max_root_files=500)
    made, notes = await command(checkpoints, "c-9", "echo 9 >> .bashrc", home)
    assert notes == [] and made
    assert checkpoints.status()["roots"][0]["files"] == 401
    checkpoints.watchers.close()


async def test_the_filesystem_root_is_refused_without_a_traceback(tmp_path: Path) -> None:
    state = tmp_path / "state"
    checkpoints = engine([Path("/")], state, max_root_files=2000, measure_seconds=20)
    window = await checkpoints.before_command("c-1", "s", "bash", "true")
    assert window is not None and not window.trees
    (note,) = window.notes
    assert note.startswith("[no checkpoint of /: shell checkpoints are off for this root")
    assert state_objects(state) == 0
    assert inotify_watches(checkpoints) == 0 and checkpoints.watchers.budget.used == 0
    checkpoints.watchers.close()


_MOUNTED = """
import asyncio, sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from tests.checkpoints.test_root_budget import command, engine, inotify_watches
async def main() -> None:
    root = Path({root!r})
    checkpoints = engine([root], Path({state!r}), max_root_files=100)
    made, notes = await command(checkpoints, "c-1", "echo x >> a.txt && echo y >> mnt/m0", root)
    assert notes == [], notes
    assert [f.path for c in made for f in c.files] == ["a.txt"], made
    assert inotify_watches(checkpoints) == 2, inotify_watches()  # the root and proc_like, not mnt
    assert checkpoints.status()["roots"][0]["files"] == 2
    print("ok")
asyncio.run(main())
"""


def test_other_mounts_and_proc_are_not_walked(tmp_path: Path) -> None:
    """A tmpfs mounted inside the root with more files than the budget, and /proc bound
    there too (in a mount namespace of the test's own): neither is measured, watched or
    recorded."""
    root = tmp_path / "ws"
    (root / "mnt").mkdir(parents=True)
    (root / "proc_like").mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "proc_like" / "b.txt").write_text("b\n")
    script = _MOUNTED.format(repo=str(Path.cwd()), root=str(root), state=str(tmp_path / "st"))
    setup = (
        f"mount -t tmpfs none {root}/mnt && "
        f"for n in $(seq 0 300); do echo $n > {root}/mnt/m$n; done && "
        f"mkdir {root}/proc_like/proc && mount --bind /proc {root}/proc_like/proc"
    )
    done = in_own_mounts(setup, script)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


async def test_a_long_first_snapshot_outside_git_holds_no_command_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first snapshot of a folder outside git runs in a thread at low priority; a
    command does not wait for it longer than FIRST_WAIT and says what that means. (Its
    length is simulated: the snapshot waits for the test's go.)"""
    root = tmp_path / "ws"
    make_tree(root, 5, 5)
    monkeypatch.setattr(first_snapshot, "FIRST_WAIT", 0.05)
    monkeypatch.setattr(first_snapshot, "SMALL_ROOT", 0)
    checkpoints = engine([root], tmp_path / "state")
    go = threading.Event()
    niceness: list[int] = []
    take = checkpoints._commands.first._take

    def slow(root: Path, tally: Any) -> Any:
        niceness.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        go.wait(60)
        return take(root, tally)

    checkpoints._commands.first._take = slow
    made, notes = await command(checkpoints, "c-1", "echo x >> d0/e0/f0.txt", root)
    assert not made
    assert notes == [f"[no checkpoint of {root}: {first_snapshot.still_running(0)}]"]
    assert "a revert cannot undo what it changes" in notes[0]
    assert niceness and niceness[0] >= 10
    assert checkpoints.status()["roots"][0]["shellCheckpoints"].startswith(
        "on; the first snapshot is under way"
    )
    go.set()
    job = checkpoints._commands.first.job(root)
    assert job is not None and job.done.wait(60)
    made, notes = await command(checkpoints, "c-2", "echo y >> d0/e0/f1.txt", root)
    assert notes == [] and [f.path for c in made for f in c.files] == ["d0/e0/f1.txt"]
    checkpoints.watchers.close()


@pytest.mark.slow
async def test_the_refusal_line_over_the_wire(tmp_path: Path) -> None:
    """`toolhost serve` as a subprocess: the first bash result says it once, toolhost/status
    keeps saying it, and no checkpoint is listed."""
    root = tmp_path / "big"
    make_tree(root, 3, 10)
    options = {"policy": {"mode": "bypass"}, "checkpoints": {"maxRootFiles": 20}}
    async with lsp_session(root, options) as client:
        first = await lsp_call(client, "bash", {"command": "echo x >> d0/e0/f0.txt"}, callId="c-1")
        off = (
            "shell checkpoints are off for this root: it holds more than 20 files "
            "(checkpoints.max_root_files)"
        )
        line = f"[no checkpoint of {root}: {off}; {first_snapshot.STAYS_OFF}]"
        assert line in text_of(first)
        second = await lsp_call(client, "bash", {"command": "echo y >> d0/e0/f0.txt"}, callId="c-2")
        assert "no checkpoint" not in text_of(second)
        status = await client.protocol.send_request_async("toolhost/status", {})
        (shown,) = status["checkpoints"]["roots"]
        assert shown["shellCheckpoints"] == f"off: {off}"
        assert status["checkpoints"]["inotifyWatches"]["held"] == 0
        assert await checkpoints(client) == []


def test_a_command_does_not_wait_for_the_first_walk(tmp_path: Path) -> None:
    """While the watcher's first walk runs (measuring a large root), a command's window of
    new names does not wait for it: the root is not watched yet (the sandbox then looks for
    protected names as where no watcher runs). The walk is held by the test's tally."""
    root = tmp_path / "ws"
    make_tree(root, 3, 2)
    walking, go = threading.Event(), threading.Event()

    class HeldTally(Tally):
        def check_time(self) -> None:
            walking.set()
            go.wait(60)

    watcher = TreeWatcher(root)
    walk = threading.Thread(target=watcher.start, args=(HeldTally(10**6, 1 << 40, 60.0),))
    walk.start()
    assert walking.wait(60)
    assert watcher.open_window() is None  # at once, not after the walk
    go.set()
    walk.join(60)
    window = watcher.open_window()
    assert window is not None
    (root / "new.txt").write_text("x")
    assert watcher.close_window(window).created == {"new.txt"}
    watcher.close()


async def test_a_seeded_git_root_is_measured_from_its_index_not_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tracked files and their sizes come from the user's index; a root whose tracked
    folders alone are more than the watches left is not walked to find that out."""
    root = tmp_path / "ws"
    make_tree(root, 300, 2)  # 600 files in 300 + 30 folders
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, check=True)

    def no_walk(*args: object) -> None:
        raise AssertionError("walked")

    monkeypatch.setattr(command_snapshots, "measure", no_walk)
    monkeypatch.setattr(TreeWatcher, "start", no_walk)
    share = 100.5 / max_user_watches()
    checkpoints = engine([root], tmp_path / "state", watch_share=share)
    checkpoints.watchers.fanotify = False
    checkpoints.watchers.folder_marks = False  # (test_fanotify_folders.py: with them)
    made, notes = await command(checkpoints, "c-1", "echo x >> d0/e0/f0.txt", root)
    assert [f.path for c in made for f in c.files] == ["d0/e0/f0.txt"]
    assert len(notes) == 1 and "the root is not watched" in notes[0]
    status = checkpoints.status()["roots"][0]
    assert status["files"] == 600 and status["shellCheckpoints"] == "on"
    checkpoints.watchers.close()
    # Over the file budget by the index: refused before anything is hashed.
    checkpoints = engine([root], tmp_path / "state2", max_root_files=500)
    made, notes = await command(checkpoints, "c-2", "echo y >> d0/e0/f0.txt", root)
    assert not made and "more than 500 files" in notes[0]
    assert state_objects(tmp_path / "state2") == 0
    checkpoints.watchers.close()


_HOLD_LOCK = """
import fcntl, sys
with open(sys.argv[1], "a") as handle:
    fcntl.flock(handle, fcntl.LOCK_EX)
    print("held", flush=True)
    sys.stdin.read()
"""


async def test_the_measure_does_not_wait_for_another_process_holding_the_repository(
    tmp_path: Path,
) -> None:
    """Another toolhost process on the root holds the shadow repository's lock through its
    own first snapshot: this process's measure counts the root meanwhile. The waiting
    commands judge the root's size by that count; stalled behind the lock, then grown at
    once, it read as a large root being measured, and a command on a small root ran
    without a checkpoint (three agents at once in CI). The snapshot follows the lock."""
    root = tmp_path / "ws"
    make_tree(root, 3, 2)
    checkpoints = engine([root], tmp_path / "state")
    store = checkpoints._commands._store(root)
    store.ensure()  # (the other process made the repository)
    other = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(store.repo.git.folder / "lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdout is not None and other.stdin is not None
    try:
        assert other.stdout.readline().strip() == "held"
        running = asyncio.ensure_future(command(checkpoints, "c-1", "echo x >> d0/e0/f0.txt", root))
        for _ in range(600):
            job = checkpoints._commands.first.job(root)
            if job is not None and job.tally.measured:
                break
            await asyncio.sleep(0.1)
        assert other.poll() is None and not running.done()  # the lock is still held
        assert job is not None and job.tally.measured and job.tally.files == 6  # measured
    finally:
        other.stdin.close()
        other.wait(60)
    made, notes = await running
    assert notes == [] and [f.path for c in made for f in c.files] == ["d0/e0/f0.txt"]
    checkpoints.watchers.close()
