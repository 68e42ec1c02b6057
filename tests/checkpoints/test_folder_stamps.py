"""Snapshots of a root no watcher watches, by its folders' stamps (shadow/folder_stamps.py):
the same workspace twice, one checkpointed by stamps and one by full scans (`git add -A`
each time); every kind of change must give the same records, with stamps trusted at once
(margin 0) and with the default margin (every young folder listed again), and a revert by
stamps gives the files back."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.shadow import folder_stamps
from lsp_server.config.tree import CheckpointsConfig, Limits
from lsp_server.fs.workspace import Workspace
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.reverts import Reverter
from lsp_server.runtime.sessions.observations import FileLocks, Observations
from tests.checkpoints.snapshots import run_checkpointed, tree_state

pytestmark = pytest.mark.timeout(180)

STEPS = [
    "echo more >> pkg/m0.py",
    "echo new > pkg/new.py",
    "mkdir -p fresh/a/b && echo x > fresh/a/b/deep.txt && echo y > fresh/top.txt",
    "echo s > pkg/deep/secret.local",
    "mkdir -p build && echo o > build/out.o && mkdir -p keep && echo k > keep/k.local",
    "rm pkg/m1.py && rm -r fresh/a",
    "mv pkg/deep pkg/moved && echo z >> pkg/moved/d.py",
    "chmod +x pkg/m2.py && ln -s m2.py pkg/link",
    "rm pkg/m3.py && mkdir pkg/m3.py && echo f > pkg/m3.py/inner.txt",
    "rm -r pkg/m3.py && echo file > pkg/m3.py",
    "echo outside > {out}/o.txt && mv {out}/o.txt pkg/in.txt",
    "touch -d 2001-01-01 pkg/new.py && cp -p pkg/new.py pkg/copy.py",
    "mkdir nested && cd nested && git init -q && echo n > n.txt",
    "printf '*.local\\n' > .gitignore",
    "echo again > data.local && echo more >> keep/k.local",
    "ln pkg/m4.py pkg/hard.py && echo via >> pkg/hard.py",
    "true",
]


def make_workspace(root: Path) -> None:
    (root / "pkg" / "deep").mkdir(parents=True)
    for n in range(6):
        (root / "pkg" / f"m{n}.py").write_text(f"VALUE = {n}\n")
    (root / "pkg" / "deep" / "d.py").write_text("DEEP = 1\n")
    (root / ".gitignore").write_text("*.local\nbuild/\nkeep/\n")
    (root / "data.local").write_text("local settings\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


class Twin:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.roots = {"stamped": tmp_path / "stamped", "scanned": tmp_path / "scanned"}
        make_workspace(self.roots["stamped"])
        shutil.copytree(self.roots["stamped"], self.roots["scanned"], symlinks=True)
        self.engines: dict[str, Checkpoints] = {}
        for name, root in self.roots.items():
            (tmp_path / f"out-{name}").mkdir()
            config = CheckpointsConfig(ignored_budget_mb=1)
            engine = Checkpoints(Workspace([root]), config, tmp_path / f"state-{name}")
            engine.watchers.enabled = False
            engine._commands.folder_stamps = name == "stamped"
            self.engines[name] = engine
        self.count = 0

    async def run(self, command: str) -> list[tuple[object, ...]]:
        self.count += 1
        found = {}
        for name, root in self.roots.items():
            script = command.format(out=self.tmp / f"out-{name}")
            ran = await run_checkpointed(
                self.engines[name], root, f"c-{self.count}", command, script
            )
            assert not ran.notes, ran.notes
            found[name] = ran.records
        assert found["stamped"] == found["scanned"], command
        return found["stamped"]

    def scan(self) -> str:
        return self.engines["stamped"].watchers.scans[self.roots["stamped"]]


@pytest.mark.parametrize("margin", [0, folder_stamps.MARGIN_NS])
async def test_stamps_record_what_a_full_scan_records(
    tmp_path: Path, margin: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder_stamps, "MARGIN_NS", margin)
    twin = Twin(tmp_path)
    await twin.run("true")  # the first snapshot scans in full and stamps the folders
    for step in STEPS:
        found = await twin.run(step)
        assert found or step == "true" or "git init" in step, step  # a nested repo: none
        if ".gitignore" in step:
            assert twin.scan().startswith("full scan"), twin.scan()  # what is ignored changed
        else:
            assert twin.scan().startswith("folders' stamps"), (step, twin.scan())


async def test_a_change_by_stamps_reverts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(folder_stamps, "MARGIN_NS", 0)
    twin = Twin(tmp_path)
    root = twin.roots["stamped"]
    await twin.run("true")
    start = tree_state(root)
    await twin.run("mkdir -p fresh/a && echo x > fresh/a/x.txt && echo s > fresh/s.local")
    await twin.run("echo more >> pkg/m0.py && rm pkg/m1.py && echo n > pkg/new.py")
    assert twin.scan() == "folders' stamps (1 of 5 folders listed)"
    files = FileService(Workspace([root]), Observations(), Limits(), None)
    reverter = Reverter(twin.engines["stamped"], files, FileLocks())
    for call_id in ("c-3", "c-2"):
        outcome = await reverter.revert(call_id)
        assert not outcome.conflicts, outcome.conflicts
    assert tree_state(root) == start
