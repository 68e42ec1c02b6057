"""What a checkpoint adds to a bash call, beside `git status` in the same workspace.

Two git repositories of --files files each (default 10,000, in 100 folders): one
checkpointed as the server does it (a file watcher says what changed, watcher.py), one with
the watcher off (every snapshot scans the whole tree: the cost before the watcher, and
still the cost after a watcher overflow). Each round, in turn and for each: `git status` in
that repository (the reference), then checkpointed "commands" that change nothing, 1 file,
and 100 files. The checkpoint's cost is the time of the snapshot before the command plus
the snapshot, diff and record after it (what the bash tool awaits); the change itself is
not timed. Trimming to the bounds runs after the call and is not counted. Medians of
--rounds rounds; ratios against that repository's `git status` in the same run. "100 blobs
(floor)": git storing 100 new files' blobs and nothing else, what any checkpoint of 100
changed files must at least do.

    .venv/bin/python bench/checkpoint_cost.py
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import attrs

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.fs.workspace import Workspace


def make_repository(root: Path, files: int) -> list[Path]:
    paths = []
    per_folder = max(files // 100, 1)
    for n in range(files):
        path = root / f"pkg{n // per_folder}" / f"module{n % per_folder}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {n}\n" + "# filler line\n" * 20)
        paths.append(path)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=root, check=True)
    return paths


def scratch_repository(scratch: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", str(scratch / "git")], check=True)
    return scratch


def store_blobs(scratch: Path, n: int, count: int) -> float:
    """The floor of a checkpoint of `count` changed files: git storing `count` new blobs
    (loose objects, no fsync, as the shadow repository does), nothing else."""
    folder = scratch / f"blobs-{n}"
    folder.mkdir(parents=True)
    names = []
    for k in range(count):
        path = folder / f"f{k}"
        path.write_text(f"VALUE = {n}-{k}\n" + "# filler line\n" * 20)
        names.append(str(path))
    command = ["git", "-c", "core.fsync=none", "-c", "core.looseCompression=1"]
    command += ["--git-dir", str(scratch / "git"), "hash-object", "-w", "--stdin-paths"]
    started = time.perf_counter()
    subprocess.run(command, input="\n".join(names).encode(), check=True, capture_output=True)
    return time.perf_counter() - started


def git_status(root: Path) -> float:
    started = time.perf_counter()
    subprocess.run(["git", "status", "--porcelain"], cwd=root, check=True, capture_output=True)
    return time.perf_counter() - started


async def checkpointed(checkpoints: Checkpoints, call_id: str, changed: list[Path]) -> float:
    started = time.perf_counter()
    window = await checkpoints.before_command(call_id, "bench", "bash", "bench")
    before = time.perf_counter() - started
    for path in changed:  # the "command": not timed
        path.write_text(path.read_text() + f"# {call_id}\n")
    started = time.perf_counter()
    made = await checkpoints.after_command(window)
    after = time.perf_counter() - started
    assert len(made[0].files) == len(changed) if made else not changed, made
    return before + after


async def one_repository(folder: Path, name: str, files: int, watch: bool) -> Round:
    root = folder / name
    paths = make_repository(root, files)
    config = CheckpointsConfig(max_checkpoints=10_000, budget_mb=4096)
    checkpoints = Checkpoints(Workspace([root]), config, folder / f"state-{name}")
    checkpoints.watchers.enabled = watch
    first = time.perf_counter()
    await checkpointed(checkpoints, "warm-up", paths[:1])  # the first snapshot adds all
    print(
        f"{name}: first snapshot of {files} files (once per workspace): "
        f"{(time.perf_counter() - first) * 1000:.0f} ms"
    )
    return Round(root, paths, checkpoints)


@attrs.define
class Round:
    root: Path
    paths: list[Path]
    checkpoints: Checkpoints
    times: dict[str, list[float]] = attrs.Factory(
        lambda: {"git status": [], "no change": [], "1 file": [], "100 files": []}
    )
    scratch: Path | None = None
    """Set for one repository: the floor of 100 files (store_blobs) is measured there."""

    async def run(self, n: int) -> None:
        await self.checkpoints.settle()  # trimming of the last round is not counted
        self.times["git status"].append(git_status(self.root))
        checkpoints, paths = self.checkpoints, self.paths
        self.times["no change"].append(await checkpointed(checkpoints, f"none-{n}", []))
        self.times["1 file"].append(await checkpointed(checkpoints, f"one-{n}", [paths[n]]))
        hundred = paths[1000 + n * 100 : 1100 + n * 100]
        self.times["100 files"].append(await checkpointed(checkpoints, f"many-{n}", hundred))
        if self.scratch is not None:
            self.times.setdefault("100 blobs (floor)", []).append(store_blobs(self.scratch, n, 100))


async def run(files: int, rounds: int) -> dict[str, Round]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        found = {
            "watcher": await one_repository(folder, "watched", files, True),
            "full scan": await one_repository(folder, "scanned", files, False),
        }
        found["watcher"].scratch = scratch_repository(folder / "scratch")
        for n in range(rounds):
            for each in found.values():
                await each.run(n)
        for each in found.values():
            await each.checkpoints.settle()
            scans = set(each.checkpoints.watchers.scans.values())
            print(f"{each.root.name}: last snapshot by {', '.join(sorted(scans))}")
            each.checkpoints.watchers.close()
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    found = asyncio.run(run(args.files, args.rounds))
    print(f"{'':<24} {'median ms':>10} {'x git status':>13}")
    for mode, each in found.items():
        reference = statistics.median(each.times["git status"])
        for name, values in each.times.items():
            median = statistics.median(values)
            print(f"{mode + ': ' + name:<24} {median * 1000:>10.1f} {median / reference:>13.2f}")


if __name__ == "__main__":
    main()
