"""Shell checkpoints from the file watcher (watcher.py): each command runs in two identical
workspaces, one checkpointed from the paths the watcher saw change and one by full scans
(the watcher off); the records must be the same, the watched one must really have taken
the watcher's path (`scans`), and reverting it must give back the exact files.

Each case is one a watcher can miss: folders made and filled before their watch exists,
renames in and out of the tree, writes through a symlinked or hard-linked name outside the
root, a change within the same mtime tick, ignored files the budget covers, lost events."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lsp_server.checkpoints.command_snapshots import FROM_WALK
from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.config.tree import CheckpointsConfig, Limits
from lsp_server.fs import inotify
from lsp_server.fs.workspace import Workspace
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.reverts import Reverter
from lsp_server.runtime.sessions.observations import FileLocks, Observations
from lsp_server.sandbox.bubblewrap import BubblewrapLayout, bubblewrap_argv
from tests.checkpoints.snapshots import tree_state
from tests.conftest import require_program

pytestmark = pytest.mark.timeout(120)

BY_WATCHER = "changed paths"


def make_workspace(root: Path) -> None:
    (root / "pkg" / "deep").mkdir(parents=True)
    for n in range(5):
        (root / "pkg" / f"m{n}.py").write_text(f"VALUE = {n}\n")
    (root / "pkg" / "deep" / "d.py").write_text("DEEP = 1\n")
    (root / "tracked.txt").write_text("tracked\n")
    (root / ".gitignore").write_text("*.local\nbuild/\n")
    (root / "data.local").write_text("local settings\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


class Twin:
    """The same workspace twice: `watched` (the watcher's path) and `scanned` (full scans)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.roots = {"watched": tmp_path / "watched", "scanned": tmp_path / "scanned"}
        make_workspace(self.roots["watched"])
        shutil.copytree(self.roots["watched"], self.roots["scanned"], symlinks=True)
        self.engines: dict[str, Checkpoints] = {}
        for name, root in self.roots.items():
            (tmp_path / f"out-{name}").mkdir()
            config = CheckpointsConfig(ignored_budget_mb=1)
            engine = Checkpoints(Workspace([root]), config, tmp_path / f"state-{name}")
            engine.watchers.enabled = name == "watched"
            self.engines[name] = engine
        self.count = 0

    @property
    def root(self) -> Path:
        return self.roots["watched"]

    @property
    def checkpoints(self) -> Checkpoints:
        return self.engines["watched"]

    def close(self) -> None:
        for engine in self.engines.values():
            engine.watchers.close()

    async def run(
        self,
        command: str,
        *,
        scan: str = BY_WATCHER,
        before: str = BY_WATCHER,
        bwrap: str | None = None,
    ) -> list[tuple[object, ...]]:
        """Run `command` (`{out}`: a folder outside the root) checkpointed in both; the
        records of the watched one, checked against the scanned one's. `before` and `scan`:
        how the watched one's snapshots before and after the command were taken. `bwrap`:
        run it in the real sandbox, as the bash tool does."""
        self.count += 1
        call_id = f"c-{self.count}"
        found = {}
        scans = self.checkpoints.watchers.scans
        for name, root in self.roots.items():
            engine = self.engines[name]
            window = await engine.before_command(call_id, "s", "bash", command)
            if name == "watched":
                assert scans[root] == before
            script = command.format(out=self.tmp / f"out-{name}", root=root)
            argv = ["sh", "-c", script]
            if bwrap is not None:
                layout = BubblewrapLayout(bwrap=bwrap, roots=(root.resolve(),), writable=True)
                argv = bubblewrap_argv(layout, argv, root, self.tmp / f"sandbox-{name}")
            subprocess.run(argv, cwd=root, check=True)
            made = await engine.after_command(window)
            await engine.settle()
            assert window is not None and not window.notes, window and window.notes
            found[name] = sorted(
                (f.path, f.change, f.source, f.before, f.after, f.not_stored)
                for checkpoint in made
                for f in checkpoint.files
            )
        assert found["watched"] == found["scanned"]
        assert self.checkpoints.watchers.scans[self.root] == scan
        return found["watched"]

    async def revert(self, call_id: str, conflicts: int = 0) -> list[str]:
        """Revert `call_id` in the watched root; the reasons of its conflicts."""
        files = FileService(Workspace([self.root]), Observations(), Limits(), None)
        outcome = await Reverter(self.checkpoints, files, FileLocks()).revert(call_id)
        assert len(outcome.conflicts) == conflicts, outcome.conflicts
        return [f"{c.path}: {c.reason}" for c in outcome.conflicts]


@pytest.fixture
async def twin(tmp_path: Path):  # type: ignore[no-untyped-def]
    made = Twin(tmp_path)
    # The first snapshot starts the watcher and scans everything; the next one has its paths.
    await made.run("true", before=f"full scan: the watcher was not running{FROM_WALK}")
    yield made
    made.close()


def changes(found: list[tuple[object, ...]]) -> set[tuple[object, ...]]:
    return {(path, change) for path, change, *_ in found}


async def test_folders_made_and_filled_before_their_watch_exists(twin: Twin) -> None:
    before = tree_state(twin.root)
    found = await twin.run("mkdir -p a/b/c && echo x > a/b/c/f && echo y > a/g && echo z >> a/b/h")
    assert changes(found) == {("a/b/c/f", "created"), ("a/g", "created"), ("a/b/h", "created")}
    # The new folders are watched now: a change deep inside them is seen next time.
    found = await twin.run("echo more >> a/b/c/f && touch a/b/c/new")
    assert changes(found) == {("a/b/c/f", "modified"), ("a/b/c/new", "created")}
    await twin.revert("c-3")
    await twin.revert("c-2")
    assert tree_state(twin.root) == before


async def test_a_command_in_the_real_sandbox(twin: Twin) -> None:
    """The bash tool's commands run under bubblewrap, the root bind-mounted: the watcher
    sees their changes through the mount (inotify is per inode)."""
    bwrap = require_program("bwrap", "the shell sandbox runs commands under bubblewrap")
    for name in twin.roots:
        (twin.tmp / f"sandbox-{name}").mkdir()
    before = tree_state(twin.root)
    found = await twin.run(
        "mkdir -p a/b && echo x > a/b/f && mv tracked.txt a/ && echo y >> pkg/m0.py",
        bwrap=bwrap,
    )
    assert changes(found) == {
        ("a/b/f", "created"),
        ("a/tracked.txt", "moved"),
        ("pkg/m0.py", "modified"),
    }
    await twin.revert("c-2")
    assert tree_state(twin.root) == before


async def test_renames_into_out_of_and_within_the_tree(twin: Twin) -> None:
    before = tree_state(twin.root)
    found = await twin.run(
        "mkdir -p {out}/incoming/sub && echo in > {out}/incoming/sub/i.txt && "
        "mv {out}/incoming moved_in && mv tracked.txt {out}/gone.txt && mv pkg/deep pkg/deeper"
    )
    assert changes(found) == {
        ("moved_in/sub/i.txt", "created"),
        ("tracked.txt", "deleted"),
        ("pkg/deeper/d.py", "moved"),
    }
    # Moved-in and renamed folders are watched under their new names.
    found = await twin.run("echo again >> moved_in/sub/i.txt && echo 2 >> pkg/deeper/d.py")
    assert changes(found) == {("moved_in/sub/i.txt", "modified"), ("pkg/deeper/d.py", "modified")}
    for call_id in ("c-3", "c-2"):
        await twin.revert(call_id)
    assert tree_state(twin.root) == before


async def test_writes_through_names_outside_the_root(twin: Twin) -> None:
    """inotify watches folders' inodes, so a write through a symlink to a folder of the
    root is seen; a file with a second hard link outside is looked at every time (links
    that exist when the watcher starts, or made through the root: docs/CHECKPOINTS.md)."""
    for name, root in twin.roots.items():
        (twin.tmp / f"alias-{name}").symlink_to(root / "pkg")
        os.link(root / "pkg" / "m1.py", twin.tmp / f"out-{name}" / "hard.py")
    twin.checkpoints.watchers.close()  # started again below, finding the hard link
    await twin.run("true", before=f"full scan: the watcher was not running{FROM_WALK}")
    before = tree_state(twin.root)
    found = await twin.run(
        "cd {out}/.. && echo via-alias >> alias-$(basename {root})/m0.py && "
        "echo via-hard-link >> {out}/hard.py"
    )
    assert changes(found) == {("pkg/m0.py", "modified"), ("pkg/m1.py", "modified")}
    # Replacing m1.py's name would leave the change in its outside name: the revert says so
    # and leaves it (docs/CHECKPOINTS.md, "What a revert never follows").
    [refused] = await twin.revert("c-3", conflicts=1)
    assert refused.startswith("pkg/m1.py: is a file with 2 names (hard links), 1 of them outside")
    after = tree_state(twin.root)
    assert after["pkg/m0.py"] == before["pkg/m0.py"]
    assert after["pkg/m1.py"] != before["pkg/m1.py"]


async def test_a_same_size_change_within_one_mtime_tick(twin: Twin) -> None:
    await twin.run("printf aaaa > tick.txt")
    before = tree_state(twin.root)
    # Same size, and the mtime put back to what the last snapshot saw.
    found = await twin.run(
        "python3 -c \"import os; t = os.stat('tick.txt').st_mtime_ns; "
        "open('tick.txt', 'w').write('bbbb'); os.utime('tick.txt', ns=(t, t))\""
    )
    assert changes(found) == {("tick.txt", "modified")}
    await twin.revert("c-3")
    assert tree_state(twin.root) == before


async def test_ignored_files_within_the_budget(twin: Twin) -> None:
    before = tree_state(twin.root)
    found = await twin.run(
        "echo changed >> data.local && echo new > new.local && mkdir -p cfg && "
        "echo s > cfg/secret.local && mkdir -p build && echo o > build/out.o"
    )
    assert changes(found) == {
        ("data.local", "modified"),
        ("new.local", "created"),
        ("cfg/secret.local", "created"),
    }  # build/ is ignored and regenerable (checkpoints.skip_folders): never recorded
    await twin.revert("c-2")
    assert tree_state(twin.root) == before | {"build/out.o": tree_state(twin.root)["build/out.o"]}


async def test_a_gitignore_change_scans_everything(twin: Twin) -> None:
    found = await twin.run(
        "echo '' > .gitignore && echo x >> data.local", scan="full scan: a .gitignore changed"
    )
    assert ("data.local", "modified") in changes(found)


async def test_type_changes_temporary_files_and_nested_repositories(twin: Twin) -> None:
    found = await twin.run(
        "rm tracked.txt && mkdir tracked.txt && echo x > tracked.txt/inner && "
        "rm -r pkg/deep && echo d > pkg/deep && echo t > tmp.$$ && rm tmp.$$ && "
        "ln -s m0.py pkg/link && mkdir vendor && git -C vendor init -q && echo v > vendor/v"
    )
    assert changes(found) == {
        ("tracked.txt", "deleted"),
        ("tracked.txt/inner", "created"),
        ("pkg/deep/d.py", "deleted"),
        ("pkg/deep", "created"),
        ("pkg/link", "created"),
    }
    found = await twin.run("echo w >> vendor/v && chmod +x pkg/m2.py")
    assert changes(found) == {("pkg/m2.py", "modified")}  # inside a nested repository: no


def queue_limit() -> int:
    return int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())


async def test_lost_events_fall_back_to_a_full_scan(twin: Twin) -> None:
    """The kernel's queue overflows (events are dropped for real): the next snapshot scans
    everything, and the change whose events were dropped is recorded."""
    limit = queue_limit()
    assert limit <= 1_000_000, "a queue this large takes too long to fill here"
    touch = "os.utime(('pkg/m3.py', 'pkg/m4.py')[n % 2])"
    flood = f'python3 -c "import os\nfor n in range({limit + 10}): {touch}"'
    found = await twin.run(
        f"echo lost >> tracked.txt && {flood} && echo also >> pkg/deep/d.py",
        scan="full scan: the kernel dropped events (inotify queue overflow)",
    )
    assert changes(found) == {("tracked.txt", "modified"), ("pkg/deep/d.py", "modified")}
    found = await twin.run("echo back >> tracked.txt")  # and the watcher serves again
    assert changes(found) == {("tracked.txt", "modified")}


async def test_an_overflow_record_forces_a_full_scan(twin: Twin) -> None:
    """The seam: an IN_Q_OVERFLOW record handed to the watcher as if from the kernel."""
    twin.checkpoints.watchers.of(twin.root).feed(inotify.record(-1, inotify.IN_Q_OVERFLOW))
    found = await twin.run(
        "echo x >> tracked.txt",
        before="full scan: the kernel dropped events (inotify queue overflow)",
    )
    assert changes(found) == {("tracked.txt", "modified")}


async def test_ignored_files_left_out_get_in_when_the_budget_frees(twin: Twin) -> None:
    """Files over the ignored-file budget are candidates again at every snapshot, as a full
    scan sees them, though no event names them."""
    a, b = os.urandom(700_000), os.urandom(700_000)  # nothing alike: no rename
    for root in twin.roots.values():
        (root / "a.local").write_bytes(a)
    await twin.run("true")
    for root in twin.roots.values():
        (root / "b.local").write_bytes(b)  # over the 1 MB budget with a.local
    await twin.run("true")
    found = await twin.run("rm a.local")
    assert changes(found) == {("a.local", "deleted"), ("b.local", "created")}


def test_a_window_holds_the_names_made_while_it_was_open(tmp_path: Path) -> None:
    """What a command made at any depth (the sandbox looks there for protected names):
    names made before it opened are not its own, even when another command's snapshot
    reads the queue meanwhile; dropped events say the window cannot be trusted."""
    from lsp_server.checkpoints.watching.watcher import TreeWatcher

    (tmp_path / "a" / "b").mkdir(parents=True)
    watcher = TreeWatcher(tmp_path)
    assert watcher.open_window() is None  # not started: no window
    watcher.take()
    (tmp_path / "before").mkdir()
    window = watcher.open_window()
    assert window is not None
    (tmp_path / "a" / "b" / ".envrc").write_text("x")
    watcher.take()  # another command's snapshot reads the queue: the window still sees it
    (tmp_path / "a" / "b" / "c" / "d").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "d" / ".git").mkdir()
    assert watcher.close_window(window).created == {"a/b/.envrc", "a/b/c"}
    assert window.lost is None

    overflowed = watcher.open_window()
    assert overflowed is not None
    watcher.feed(inotify.record(-1, inotify.IN_Q_OVERFLOW))
    assert watcher.close_window(overflowed).lost is not None
    watcher.take()

    # The repository set aside (as the sandbox does): a plain folder, watched all through.
    (tmp_path / "a" / "b" / "c" / "d" / ".git").rename(tmp_path / "a/b/c/d/.git.aside")
    (tmp_path / "a" / "b" / "c" / "d" / "e").mkdir()
    watcher.take()
    (tmp_path / "a" / "b" / "c" / "d" / "e" / "f").write_text("x")
    assert watcher.take().paths == {"a/b/c/d/e/f"}
    watcher.close()
