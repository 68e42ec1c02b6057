"""What a checkpoint adds to a bash call, beside `git status` in the same workspace.

A git repository of --files files (default 10,000, in 100 folders). Each round, in turn:
`git status` in the workspace (the reference), then checkpointed "commands" that change
nothing (the floor: two scans), 1 file, and 100 files. The checkpoint's cost is the time
of the snapshot before the command plus the snapshot, diff and record after it (what the
bash tool awaits);
the change itself is not timed. Trimming to the bounds runs after the call and is not
counted. Medians of --rounds rounds.

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

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.config.tree import CheckpointsConfig
from lsp_server.runtime.fs.workspace import Workspace


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


async def run(files: int, rounds: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "workspace"
        paths = make_repository(root, files)
        config = CheckpointsConfig(max_checkpoints=10_000, budget_mb=4096)
        checkpoints = Checkpoints(Workspace([root]), config, Path(folder) / "state")
        first = time.perf_counter()
        await checkpointed(checkpoints, "warm-up", paths[:1])  # the first snapshot adds all
        print(
            f"first snapshot of {files} files (once per workspace): "
            f"{(time.perf_counter() - first) * 1000:.0f} ms"
        )
        times: dict[str, list[float]] = {
            "git status": [],
            "no change": [],
            "1 file": [],
            "100 files": [],
        }
        for n in range(rounds):
            times["git status"].append(git_status(root))
            times["no change"].append(await checkpointed(checkpoints, f"none-{n}", []))
            times["1 file"].append(await checkpointed(checkpoints, f"one-{n}", [paths[n]]))
            hundred = paths[1000 + n * 100 : 1100 + n * 100]
            times["100 files"].append(await checkpointed(checkpoints, f"many-{n}", hundred))
        await checkpoints.settle()
        return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    times = asyncio.run(run(args.files, args.rounds))
    reference = statistics.median(times["git status"])
    print(f"{'':<12} {'median ms':>10} {'x git status':>13}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<12} {median * 1000:>10.1f} {median / reference:>13.2f}")


if __name__ == "__main__":
    main()
