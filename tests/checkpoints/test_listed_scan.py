"""The first full snapshot of a watched root taken from the watcher's first walk
(shadow/listed_scan.py), so that no folder is listed twice: the same folder twice (a home
folder's mix: projects with their .gitignore, nested repositories, links, odd names, a file
over the size limit, ignored files over their budget), one snapshotted from the walk's
names, one by `git add -A`; the trees must be the same objects, the records the same, the
reverts exact, and the first one must run no git that walks the root."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints.command_snapshots import FROM_WALK
from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.shadow.isolated_git import IsolatedGit
from lsp_server.checkpoints.watching.watcher import TreeWatcher
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.fs.workspace import Workspace
from tests.checkpoints.snapshots import revert_cleanly, run_checkpointed, tree_state

pytestmark = pytest.mark.timeout(180)


def git(root: Path, *args: str) -> None:
    command = ["git", "-c", "user.name=u", "-c", "user.email=u@x", *args]
    subprocess.run(command, cwd=root, check=True, capture_output=True)


def make_home(root: Path) -> None:
    """A folder like a home: no .gitignore at the top, projects below with theirs."""
    for n in range(300):
        folder = root / "projects" / "app" / "src" / f"pkg{n % 12}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{n}.py").write_text(f"VALUE = {n}\n")
    app = root / "projects" / "app"
    (app / ".gitignore").write_text("*.log\nnotes/\n!keep.log\n/cache/\n")
    (app / "run.log").write_text("ignored\n")
    (app / "keep.log").write_text("re-included\n")
    (app / "notes" / "x" / "y").mkdir(parents=True)
    (app / "notes" / "x" / "y" / "z.o").write_text("ignored three folders deep\n")
    (app / "cache").mkdir()
    (app / "cache" / "big.bin").write_bytes(b"\1" * (1536 * 1024))  # over the 1 MB budget
    (app / "node_modules" / "pad").mkdir(parents=True)  # not ignored: recorded
    (app / "node_modules" / "pad" / "index.js").write_text("module.exports = 1\n")
    lib = root / "projects" / "lib"
    lib.mkdir()
    (lib / ".gitignore").write_text("node_modules/\n")
    (lib / "node_modules" / "dep").mkdir(parents=True)  # ignored and regenerable: left out
    (lib / "node_modules" / "dep" / "x.js").write_text("x\n")
    (root / "repo").mkdir()
    (root / "repo" / "file.txt").write_text("in a nested repository\n")
    git(root / "repo", "init", "-q")
    git(root / "repo", "add", "-A")
    git(root / "repo", "commit", "-q", "-m", "one")
    (root / "fresh-repo").mkdir()
    git(root / "fresh-repo", "init", "-q")  # no commit: git records nothing of it
    (root / "fresh-repo" / "f.txt").write_text("x\n")
    (root / "not-a-repo").mkdir()
    (root / "not-a-repo" / ".git").write_text("gitdir: /nowhere\n")  # git enters it
    (root / "not-a-repo" / "inside.txt").write_text("x\n")
    (root / ".bashrc").write_text("export A=1\n")
    (root / "bin").mkdir()
    (root / "bin" / "tool").write_text("#!/bin/sh\n")
    (root / "bin" / "tool").chmod(0o755)
    (root / "link").symlink_to(".bashrc")
    (root / "folder-link").symlink_to("projects")
    (root / "dangling").symlink_to("nowhere")
    (root / "empty").mkdir()
    for name in (":colon", "a*b", "sp ace", "new\nline", "back\\slash", "ünï"):
        (root / name).write_text(f"{name!r}\n")
    (root / os.fsdecode(b"bad\xff")).write_text("not UTF-8\n")
    (root / "large.bin").write_bytes(b"\2" * (200 * 1024))  # over max_file_bytes


class Twin:
    def __init__(self, tmp_path: Path, git_root: bool = False) -> None:
        """`git_root`: the folder is a git work tree (not seeded from: `seed_from_git`
        off), whose .git/info/exclude holds a rule of the user's."""
        self.tmp = tmp_path
        self.git_root = git_root
        self.roots = {"walk": tmp_path / "walk", "scanned": tmp_path / "scanned"}
        make_home(self.roots["walk"])
        if git_root:
            git(self.roots["walk"], "init", "-q")
            (self.roots["walk"] / ".git" / "info" / "exclude").write_text("*.mine\n")
            (self.roots["walk"] / "bin" / "notes.mine").write_text("excluded by the user\n")
            (self.roots["walk"] / "bin" / "big.mine").write_bytes(b"\3" * (1536 * 1024))
        shutil.copytree(self.roots["walk"], self.roots["scanned"], symlinks=True)
        for root in self.roots.values():
            os.mkfifo(root / "pipe")  # (git records no pipe; copytree copies none)
        self.engines: dict[str, Checkpoints] = {}
        self.start()
        self.count = 0
        self.scans: dict[str, str | None] = {}

    def start(self) -> None:
        """(Again: a server started anew on the same state folders.)"""
        for name, root in self.roots.items():
            config = CheckpointsConfig(
                ignored_budget_mb=1, max_file_bytes=100 * 1024, seed_from_git=not self.git_root
            )
            engine = Checkpoints(Workspace([root]), config, self.tmp / f"state-{name}")
            engine._commands.from_walk = name == "walk"
            self.engines[name] = engine

    def tree(self, name: str) -> str | None:
        return self.engines[name].store(self.roots[name]).repo.current()

    async def run(self, command: str) -> list[tuple[object, ...]]:
        self.count += 1
        found = {}
        for name, root in self.roots.items():
            ran = await run_checkpointed(self.engines[name], root, f"c-{self.count}", command)
            self.scans[name], found[name] = ran.scan, (ran.records, ran.said)
        assert found["walk"] == found["scanned"]
        return found["walk"][0]

    async def revert(self, name: str, call_id: str) -> None:
        await revert_cleanly(self.engines[name], self.roots[name], call_id)

    def close(self) -> None:
        for engine in self.engines.values():
            engine.watchers.close()


@pytest.fixture(params=["home", "git root"])
def twin(tmp_path: Path, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    made = Twin(tmp_path, git_root=request.param == "git root")
    yield made
    made.close()


def walking_gits(monkeypatch: pytest.MonkeyPatch, root: Path) -> list[tuple[str, ...]]:
    """The git commands run on `root` that walk all of it (`add -A` of the whole tree, the
    ignored files' listing, `ls-files --others`), as they run."""
    ran: list[tuple[str, ...]] = []
    run = IsolatedGit.run

    def recorded(self: IsolatedGit, *args: str, **kwargs: Any) -> bytes:
        named = "--pathspec-from-file=-" in args or ("--" in args[:-1] and args[-1] != ".")
        if self.work_tree == root and not named and ("-A" in args or "--others" in args):
            ran.append(args)
        return run(self, *args, **kwargs)

    monkeypatch.setattr(IsolatedGit, "run", recorded)
    return ran


def changed_after_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Between the watcher's first walk and the snapshot after it, a file is changed, one
    deleted, a folder made with a file inside (the events name them, not the listing)."""
    walk = TreeWatcher._walk_whole

    def then_change(self: TreeWatcher, *args: Any, **kwargs: Any) -> bool:
        done = walk(self, *args, **kwargs)
        (self.root / ".bashrc").write_text("export A=2\n")
        (self.root / "sp ace").unlink()
        (self.root / "late" / "deep").mkdir(parents=True)
        (self.root / "late" / "deep" / "made.txt").write_text("after the walk\n")
        (self.root / "projects" / "app" / "late.log").write_text("ignored, after the walk\n")
        return done

    monkeypatch.setattr(TreeWatcher, "_walk_whole", then_change)


async def test_the_walks_names_give_the_tree_git_add_gives(
    twin: Twin, monkeypatch: pytest.MonkeyPatch
) -> None:
    walking = walking_gits(monkeypatch, twin.roots["walk"])
    changed_after_the_walk(monkeypatch)
    before = {name: tree_state(root) for name, root in twin.roots.items()}
    first = await twin.run(
        "echo more >> projects/app/src/pkg1/m1.py && rm projects/app/keep.log && "
        "echo n > fresh.txt && echo x >> projects/app/run.log && mkdir -p newdir/d && "
        "echo y > newdir/d/f.txt && echo i > projects/app/i.log && chmod +x .bashrc && "
        "mv ':colon' moved && rm link && echo z >> repo/file.txt && "
        "echo more >> projects/app/notes/x/y/z.o && echo m > bin/new.mine && "
        "echo more >> projects/app/node_modules/pad/index.js"
    )
    assert twin.scans["walk"] is not None and twin.scans["walk"].endswith(FROM_WALK)
    assert twin.scans["scanned"] is not None and twin.scans["scanned"].startswith("full scan:")
    assert walking == []
    assert {
        ("projects/app/src/pkg1/m1.py", "modified"),
        ("projects/app/keep.log", "deleted"),
        ("fresh.txt", "created"),
        ("projects/app/run.log", "modified"),
        ("newdir/d/f.txt", "created"),
        ("projects/app/i.log", "created"),
        ("moved", "moved"),
        ("link", "deleted"),
        ("projects/app/notes/x/y/z.o", "modified"),
    } <= {(path, change) for path, change, *_ in first}
    assert twin.tree("walk") == twin.tree("scanned")  # the same objects, file for file
    # A regenerable folder is not recorded where a walk measures the root (uncounted
    # there): ignored or not, a home's .cache or node_modules never fill the state folder.
    repo = twin.engines["walk"].store(twin.roots["walk"]).repo
    recorded = repo.git.run("ls-tree", "-r", "--name-only", "-z", str(twin.tree("walk")))
    assert b"projects/app/src/pkg1/m1.py\0" in recorded and b"node_modules" not in recorded
    assert not [path for path, *_ in first if "node_modules" in str(path)]
    second = await twin.run("rm -r projects/app/src/pkg2 && echo more >> late/deep/made.txt")
    assert ("late/deep/made.txt", "modified", None) in {tuple(f[:3]) for f in second}
    for name in twin.roots:
        await twin.revert(name, "c-2")
        await twin.revert(name, "c-1")
    after = {name: tree_state(root) for name, root in twin.roots.items()}
    for name in twin.roots:  # (the files changed after the walk were changed before c-1)
        assert after[name].keys() == (before[name].keys() - {"sp ace"}) | {
            "late/deep/made.txt",
            "projects/app/late.log",
        }
        assert after[name][".bashrc"] != before[name][".bashrc"]
        # (a nested repository is recorded by its commit, a regenerable folder not at all:
        # a file changed there stays)
        kept = {"repo/file.txt", "projects/app/node_modules/pad/index.js"}
        unchanged = before[name].keys() - {"sp ace", ".bashrc", *kept}
        assert {p: after[name][p] for p in unchanged} == {p: before[name][p] for p in unchanged}


async def test_a_server_started_again_takes_its_first_snapshot_from_the_walk_too(
    twin: Twin, monkeypatch: pytest.MonkeyPatch
) -> None:
    await twin.run("echo one >> .bashrc")
    twin.close()
    for root in twin.roots.values():  # while no server runs
        (root / "projects" / "app" / "src" / "pkg3" / "m3.py").write_text("changed\n")
        (root / "bin" / "tool").unlink()
        (root / "offline.txt").write_text("made meanwhile\n")
        (root / "projects" / "app" / "offline.log").write_text("ignored, made meanwhile\n")
    twin.start()
    walking = walking_gits(monkeypatch, twin.roots["walk"])
    found = await twin.run("echo two >> .bashrc && rm offline.txt")
    assert twin.scans["walk"] is not None and twin.scans["walk"].endswith(FROM_WALK)
    assert walking == []
    assert {(path, change) for path, change, *_ in found} == {
        (".bashrc", "modified"),
        ("offline.txt", "deleted"),
    }
    assert twin.tree("walk") == twin.tree("scanned")
