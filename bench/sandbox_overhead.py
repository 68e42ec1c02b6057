"""What the shell sandbox adds to a command: toolhost's runner with and without bubblewrap.

Three commands, each run through `run_command` unsandboxed and sandboxed (workspace-write,
no network: the default), interleaved in the same run so that machine load hits both sides
alike: `true`, `git status` on this repository, and a test run of about two seconds (a
unittest file with two one-second tests). Reports the median of each side, the time added,
and the ratio, plus the supervised side (the supervisor toolhost uses when no sandbox can
start, or with the sandbox off). The "spawn only" row is bubblewrap alone
(`bwrap ... bash -c true` against `bash -c true` with subprocess.run), without the runner
around it. Target: at most 15 ms added per command.

    .venv/bin/python bench/sandbox_overhead.py --rounds 15
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsp_server.sandbox.lifetime import Supervised
from lsp_server.sandbox.service import SandboxService
from lsp_server.shell.confinement import Launcher
from lsp_server.shell.runner import RunLimits, run_command

REPO = Path(__file__).resolve().parent.parent
LIMITS = RunLimits(timeout_seconds=120)
TEST_FILE = """
import time
import unittest


class Sleepy(unittest.TestCase):
    def test_a(self):
        time.sleep(1.0)

    def test_b(self):
        time.sleep(1.0)
"""


async def timed(command: str, cwd: Path, launcher: Launcher | None) -> float:
    started = time.perf_counter()
    result = await run_command(command, cwd, LIMITS, launcher=launcher)
    elapsed = time.perf_counter() - started
    if result.exit_code != 0:
        raise SystemExit(f"{command!r} failed (exit {result.exit_code}):\n{result.output}")
    return elapsed


def spawn_only(
    launcher: Launcher, cwd: Path, rounds: int
) -> tuple[str, float, float, float | None]:
    plain_argv = ["bash", "-c", "true"]
    boxed_argv = launcher.wrap(plain_argv, cwd, Path(tempfile.gettempdir()))
    plain: list[float] = []
    boxed: list[float] = []
    for _ in range(rounds):
        for argv, sink in ((plain_argv, plain), (boxed_argv, boxed)):
            started = time.perf_counter()
            subprocess.run(argv, cwd=cwd, check=True)
            sink.append(time.perf_counter() - started)
    return "spawn only", statistics.median(plain), statistics.median(boxed), None


async def compare(
    name: str, command: str, cwd: Path, launcher: Launcher, rounds: int
) -> tuple[str, float, float, float | None]:
    sides: list[Launcher | None] = [None, launcher, Supervised()]
    times: list[list[float]] = [[], [], []]
    for side in sides:  # warm caches for every side
        await timed(command, cwd, side)
    for _ in range(rounds):
        for side, sink in zip(sides, times, strict=True):
            sink.append(await timed(command, cwd, side))
    plain, boxed, supervised = (statistics.median(t) for t in times)
    return name, plain, boxed, supervised


async def main_async(rounds: int, test_rounds: int) -> None:
    service = SandboxService()
    plan = service.plan("workspace-write")
    if not plan.sandboxed:
        raise SystemExit(f"no sandbox here: {plan.describe()}")
    with tempfile.TemporaryDirectory() as scratch:
        tests = Path(scratch) / "tests"
        tests.mkdir()
        (tests / "test_sleepy.py").write_text(TEST_FILE)
        repo_launcher = service.launcher(plan, [REPO], [".git", ".toolhost.toml"])
        tests_launcher = service.launcher(plan, [tests], [".git", ".toolhost.toml"])
        assert repo_launcher is not None and tests_launcher is not None
        unittest = f"{shlex.quote(sys.executable)} -m unittest -q test_sleepy"
        rows = [
            spawn_only(repo_launcher, REPO, rounds),
            await compare("true", "true", REPO, repo_launcher, rounds),
            await compare("git status", "git status --short", REPO, repo_launcher, rounds),
            await compare("2 s test run", unittest, tests, tests_launcher, test_rounds),
        ]
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print(
        f"{'command':<14} {'plain ms':>10} {'sandboxed ms':>13} {'added ms':>9} {'ratio':>6}"
        f" {'supervised ms':>14}"
    )
    for name, plain, boxed, supervised in rows:
        added = (boxed - plain) * 1000
        shown = "-" if supervised is None else f"{supervised * 1000:.1f}"
        print(f"{name:<14} {plain * 1000:>10.1f} {boxed * 1000:>13.1f} {added:>9.1f} "
              f"{boxed / plain:>6.2f} {shown:>14}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15, help="rounds of true and git status")
    parser.add_argument("--test-rounds", type=int, default=3, help="rounds of the test run")
    args = parser.parse_args()
    asyncio.run(main_async(args.rounds, args.test_rounds))


if __name__ == "__main__":
    main()
