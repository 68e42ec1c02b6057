"""The first snapshot of a git work tree seeded from the user's index and objects
(shadow/seed.py): each command runs in two identical repositories, one seeded and one
checkpointed by full scans from an empty shadow (`seed_from_git = false`); the records
must be the same, and reverting must give back the exact files, tracked, untracked and
ignored. A revert still works after the user's `git gc --prune=now` of a rewritten history,
and the user's .git is never written."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.shadow import folder_stamps
from lsp_server.checkpoints.shadow.repository import ShadowRepo
from lsp_server.checkpoints.watching.root_budget import max_user_watches
from lsp_server.config.tree import CheckpointsConfig, Limits
from lsp_server.fs.workspace import Workspace
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.reverts import Reverter
from lsp_server.runtime.sessions.observations import FileLocks, Observations
from tests.checkpoints.snapshots import (
    git_folder_state,
    revert_cleanly,
    run_checkpointed,
    tree_state,
)

pytestmark = pytest.mark.timeout(180)

SEEDED = "full scan: the watcher was not running; seeded from the repository's index"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=u", "-c", "user.email=u@x", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def make_repository(root: Path, files: int = 3000) -> None:
    """A committed tree of `files` files, and the states a user's repository is in: staged
    and unstaged changes, untracked and ignored files, skip-worktree and assume-unchanged
    entries, an executable, a symlink."""
    for n in range(files):
        folder = root / f"pkg{n % 40}" / f"sub{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{n}.py").write_text(f"VALUE = {n}\n")
    (root / ".gitignore").write_text("*.local\nbuild/\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    (root / "link").symlink_to("run.sh")
    (root / "staged.txt").write_text("one\n")
    (root / "hidden.txt").write_text("skip-worktree\n")
    (root / "assumed.txt").write_text("assume-unchanged\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    (root / "staged.txt").write_text("two\n")
    git(root, "add", "staged.txt")
    (root / "staged.txt").write_text("three, not staged\n")
    (root / "pkg0" / "sub0" / "m0.py").write_text("changed, not staged\n")
    git(root, "update-index", "--skip-worktree", "hidden.txt")
    git(root, "update-index", "--assume-unchanged", "assumed.txt")
    (root / "untracked.txt").write_text("untracked\n")
    (root / "data.local").write_text("ignored\n")
    (root / "newdir" / "deep").mkdir(parents=True)  # untracked, an ignored file inside
    (root / "newdir" / "deep" / "a.txt").write_text("untracked in a new folder\n")
    (root / "newdir" / "x.local").write_text("ignored in a new folder\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("build output (a regenerable folder)\n")


def engine(root: Path, state: Path, seed: bool, watch_share: float = 0.1) -> Checkpoints:
    config = CheckpointsConfig(ignored_budget_mb=1, seed_from_git=seed, watch_share=watch_share)
    return Checkpoints(Workspace([root]), config, state)


class Pair:
    def __init__(self, tmp_path: Path, files: int = 3000, mode: str = "watched") -> None:
        """`mode`: watched (both roots have a watcher); unwatched (neither: the seeded
        one's later snapshots go by its folders' stamps, folder_stamps.py, the other's by
        full scans); prepared (too many folders for the watches: the seeded root is
        walked at start, scans.prepare, and its first snapshot starts from that walk)."""
        share = 10.5 / max_user_watches() if mode == "prepared" else 0.1
        watched = mode == "watched"
        self.roots = {"seeded": tmp_path / "seeded", "scanned": tmp_path / "scanned"}
        make_repository(self.roots["seeded"], files)
        shutil.copytree(self.roots["seeded"], self.roots["scanned"], symlinks=True)
        self.engines = {
            name: engine(root, tmp_path / f"state-{name}", name == "seeded", share)
            for name, root in self.roots.items()
        }
        for name, checkpoints in self.engines.items():
            checkpoints.watchers.enabled = watched or mode == "prepared"
            checkpoints._commands.folder_stamps = name == "seeded"
            checkpoints._commands.from_walk = name == "seeded"  # (git's own walk: add -A)
        if mode == "prepared":  # no fanotify either (as for a user without privileges)
            for checkpoints in self.engines.values():
                checkpoints.watchers.fanotify = False
                checkpoints.watchers.folder_marks = False  # (a kernel before 5.13)
            seeded = self.engines["seeded"]
            # The engine's own start may have prepared already (or found a watcher would
            # run, before the lines above): either way, once more, now that none can.
            seeded._commands._preparing[self.roots["seeded"]].wait()
            seeded._commands.prepare_in_background([self.roots["seeded"]])
            seeded._commands._preparing[self.roots["seeded"]].wait()
            assert seeded.store(self.roots["seeded"]).repo.prepared is not None
        self.count = 0
        self.scans: dict[str, str | None] = {}
        """How each one's last snapshot before a command was taken."""

    async def run(self, command: str) -> list[tuple[object, ...]]:
        self.count += 1
        found = {}
        for name, root in self.roots.items():
            ran = await run_checkpointed(self.engines[name], root, f"c-{self.count}", command)
            assert not ran.said, ran.said
            self.scans[name], found[name] = ran.scan, ran.records
        assert found["seeded"] == found["scanned"]
        return found["seeded"]

    async def revert(self, name: str, call_id: str) -> None:
        await revert_cleanly(self.engines[name], self.roots[name], call_id)

    def close(self) -> None:
        for checkpoints in self.engines.values():
            checkpoints.watchers.close()


@pytest.fixture(params=["watched", "unwatched", "prepared"])
def pair(  # type: ignore[no-untyped-def]
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
):
    # Stamps trusted at once, from the walk prepared at start on: the whole tree was
    # written a moment ago (the tests of folder_stamps.py run with the margin too).
    monkeypatch.setattr(folder_stamps, "MARGIN_NS", 0)
    made = Pair(tmp_path, mode=request.param)
    yield made
    made.close()


def changes(found: list[tuple[object, ...]]) -> set[tuple[object, ...]]:
    return {(path, change) for path, change, *_ in found}


async def test_seeded_records_and_reverts_as_a_full_scan_does(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = pair.roots["seeded"]
    whole: list[Path] = []  # the roots `git add -A` scanned in full
    add_all = ShadowRepo.add_all

    def counted(repo: ShadowRepo) -> None:
        whole.append(repo.work_tree)
        add_all(repo)

    monkeypatch.setattr(ShadowRepo, "add_all", counted)
    # Stamps trusted at once: the whole tree was written a moment ago, and with the
    # default margin every folder would be listed again (the tests of folder_stamps.py
    # run both ways).
    monkeypatch.setattr(folder_stamps, "MARGIN_NS", 0)
    user_git = git_folder_state(root)
    before = {name: tree_state(r) for name, r in pair.roots.items()}
    first = await pair.run(
        "echo more >> pkg1/sub1/m1.py && rm pkg2/sub2/m2.py && echo new > fresh.txt && "
        "echo again >> untracked.txt && echo secret >> data.local && echo x > new.local && "
        "echo four > staged.txt && echo seen >> assumed.txt && echo seen >> hidden.txt && "
        "chmod +x pkg3/sub3/m3.py && mv pkg4/sub4/m4.py moved.py && rm link && "
        "echo more >> newdir/deep/a.txt && echo more >> newdir/x.local"
    )
    seeded = pair.scans["seeded"]
    assert seeded.startswith("full scan: ")
    assert seeded.endswith("; seeded from the repository's index")
    assert changes(first) == {
        ("pkg1/sub1/m1.py", "modified"),
        ("pkg2/sub2/m2.py", "deleted"),
        ("fresh.txt", "created"),
        ("untracked.txt", "modified"),
        ("data.local", "modified"),
        ("new.local", "created"),
        ("staged.txt", "modified"),
        ("assumed.txt", "modified"),
        ("hidden.txt", "modified"),
        ("pkg3/sub3/m3.py", "modified"),
        ("moved.py", "moved"),
        ("link", "deleted"),
        ("newdir/deep/a.txt", "modified"),
        ("newdir/x.local", "modified"),
    }
    # The seeded shadow stored only what differs from the user's index, not the tree.
    seeded_store = pair.engines["seeded"].store(root).repo.object_counts()
    scanned_store = pair.engines["scanned"].store(pair.roots["scanned"]).repo.object_counts()
    assert seeded_store["count"] * 10 < scanned_store["count"]
    second = await pair.run(
        "rm -r pkg5 && echo later >> fresh.txt && mkdir -p newdir/more && "
        "echo n > newdir/more/n.txt && echo i > newdir/more/i.local && rm newdir/x.local"
    )
    assert {
        ("pkg5/sub5/m5.py", "deleted"),
        ("newdir/more/n.txt", "created"),
        ("newdir/more/i.local", "created"),
        ("newdir/x.local", "deleted"),
    } <= changes(second)
    # The seeded index is brought up to date as git status would (git add -u and the
    # names it does not hold), never by a git add -A of the whole tree; unwatched, the
    # later snapshots go by the folders' stamps.
    assert root not in whole and pair.roots["scanned"] in whole
    if "watching is off" in seeded:
        assert pair.scans["seeded"].startswith("folders' stamps")
    for name in pair.roots:
        await pair.revert(name, "c-2")
        await pair.revert(name, "c-1")
        assert tree_state(pair.roots[name]) == before[name]
    assert git_folder_state(root) == user_git  # the user's .git: read, never written


async def test_a_revert_survives_the_users_gc_of_a_rewritten_history(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    make_repository(root, files=200)
    checkpoints = engine(root, tmp_path / "state", seed=True)
    before = tree_state(root)
    window = await checkpoints.before_command("c-1", "s", "bash", "edit")
    assert checkpoints.watchers.scans[root] == SEEDED
    subprocess.run(
        "echo v2 > pkg1/sub1/m1.py && rm pkg2/sub2/m2.py", shell=True, cwd=root, check=True
    )
    assert await checkpoints.after_command(window)
    # The user drops every blob the shadow borrowed: a history of one new commit, no
    # reflog, nothing in the index, and gc prunes the rest now.
    old_blob = subprocess.run(
        ["git", "hash-object", "--stdin"],
        input="VALUE = 2\n",
        text=True,
        capture_output=True,
        check=True,
    ).stdout.strip()
    git(root, "checkout", "-q", "--orphan", "fresh")
    git(root, "rm", "-r", "-q", "-f", "--cached", ".")
    (root / "only.txt").write_text("the only tracked file\n")
    git(root, "add", "only.txt")
    git(root, "commit", "-q", "-m", "rewritten")
    git(root, "branch", "-q", "-D", "master")
    git(root, "reflog", "expire", "--expire=now", "--all")
    git(root, "gc", "-q", "--prune=now")
    gone = subprocess.run(["git", "cat-file", "-e", old_blob], cwd=root, capture_output=True)
    assert gone.returncode != 0  # the deleted file's blob is no longer in the user's store
    (root / "only.txt").unlink()
    files = FileService(Workspace([root]), Observations(), Limits(), None)
    outcome = await Reverter(checkpoints, files, FileLocks()).revert("c-1")
    assert not outcome.conflicts, outcome.conflicts
    assert tree_state(root) == before
    # Later snapshots still work: the seed is taken afresh from the new index.
    window = await checkpoints.before_command("c-2", "s", "bash", "edit")
    subprocess.run("echo z > z.txt", shell=True, cwd=root, check=True)
    made = await checkpoints.after_command(window)
    assert window is not None and not window.notes, window.notes
    assert [f.path for c in made for f in c.files] == ["z.txt"]
    checkpoints.watchers.close()
