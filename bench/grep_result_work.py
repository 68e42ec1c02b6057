"""toolhost's own work on one search's results, without rg running beside it: rg's output
for a pattern is captured once, then fed to grep's real functions, step by step: parse
(rg_output.LineRecords), the per-file screen (secret test and hard-link lstat,
tools/search/result_screen.py), sort and the screen's filter, render. Same tree and
exclusions as bench/grep_vs_rg.py.

    .venv/bin/python bench/grep_result_work.py [--runs 300] [--pattern REGEX]
        [--root DIR] [--baseline DIR]

Times are this thread's CPU, the 10th percentile of the runs (the work is the same each
run; the low percentile leaves out the machine's interruptions). `--baseline DIR` runs
the same steps with another checkout's code (in a child process).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

STEPS = ("parse", "screen", "sort + filter", "render", "total")


def capture(root: Path, pattern: str) -> bytes:
    from bench.grep_vs_rg import EXCLUDE
    from lsp_server.fs.workspace import SECRET_PATTERNS
    from lsp_server.search import ripgrep

    rg = ripgrep.find_ripgrep()
    assert rg is not None, "no rg: ./run setup"
    command = [
        str(rg), "--no-config", "--no-require-git", "--no-ignore-global", "--color=never",
        *ripgrep._LINE_RECORDS, f"--glob={EXCLUDE}", *[f"--glob=!{p}" for p in SECRET_PATTERNS],
        "--regexp", pattern, "--", ".",
    ]  # fmt: skip
    return subprocess.run(command, cwd=root, capture_output=True, check=True).stdout


def tool_context(root: Path, pattern: str) -> tuple[Any, Any]:
    """The ToolContext and search engines grep gets, taken from one real call."""
    from lsp_server.tools.search import grep
    from tests.helpers import call_tool, make_runtime

    runtime = make_runtime(root, {"search": {"engine": "ripgrep"}})
    seen: dict[str, Any] = {}
    real = grep._search_blocking

    def spy(ctx: Any, engines: Any, *args: Any, **kwargs: Any) -> Any:
        seen["ctx"], seen["engines"] = ctx, engines
        return real(ctx, engines, *args, **kwargs)

    grep._search_blocking = spy  # type: ignore[assignment]
    asyncio.run(call_tool(runtime, "grep", {"pattern": pattern}))
    grep._search_blocking = real  # type: ignore[assignment]
    return seen["ctx"], seen["engines"]


def steps_once(root: Path, output: bytes, ctx: Any, engines: Any) -> list[int]:
    from lsp_server.search import render, rg_output
    from lsp_server.search.query import SearchOutcome
    from lsp_server.tools.search import grep
    from lsp_server.tools.search.result_screen import ResultScreen, secret_test

    clock = time.thread_time_ns
    marks = [clock()]
    outcome = SearchOutcome(engine="ripgrep")
    records = rg_output.LineRecords(outcome)
    for start in range(0, len(output), 1 << 16):
        records.feed(output[start : start + (1 << 16)])
    marks.append(clock())
    screen = ResultScreen(ctx, root, secret_test(ctx, engines, root))
    opened = getattr(screen, "__enter__", None)  # the code before this bench: no `with`
    if opened is not None:
        opened()
    for hits in outcome.files:
        screen.visit(hits.path)
    marks.append(clock())
    outcome.sort()
    outcome.files = [hits for hits in outcome.files if not screen.is_secret(hits.path)]
    screen.leave_out_links(outcome)
    if opened is not None:
        screen.__exit__(None, None, None)
    marks.append(clock())
    render.render(
        outcome,
        mode="content",
        max_results=100_000,
        context=0,
        display=grep.display_prefix(ctx, root).__add__,
        timeout_seconds=30,
    )
    marks.append(clock())
    return [b - a for a, b in itertools.pairwise(marks)] + [marks[-1] - marks[0]]


def measure(root: Path, pattern: str, runs: int) -> list[float]:
    output = capture(root, pattern)
    ctx, engines = tool_context(root, pattern)
    rows = [steps_once(root, output, ctx, engines) for _ in range(runs)]
    low = max(runs // 10, 0)
    return [sorted(row[i] for row in rows)[low] / 1000 for i in range(len(STEPS))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--pattern", default=r"except OSError as \w+:")
    parser.add_argument("--baseline", type=Path, help="another checkout, timed after")
    parser.add_argument("--code", type=Path, help="import toolhost from this checkout")
    parser.add_argument("--raw", action="store_true", help="print the figures only")
    options = parser.parse_args()
    sys.path.insert(0, str(options.code or Path(__file__).resolve().parents[1]))
    root = options.root.resolve()
    here = [f"{us:.1f}" for us in measure(root, options.pattern, options.runs)]
    if options.raw:
        print(" ".join(here))
        return
    columns = [here]
    if options.baseline is not None:
        arguments = ["--root", str(root), "--runs", str(options.runs), "--pattern", options.pattern]
        child = subprocess.run(
            [sys.executable, __file__, *arguments, "--code", str(options.baseline), "--raw"],
            capture_output=True,
            text=True,
            check=True,
        )
        columns.append(child.stdout.split())
    print(f"tree: {root}; pattern: {options.pattern}; CPU us, 10th percentile of {options.runs}")
    print(f"{'step':14} {'now':>9}" + (f" {'baseline':>9}" if len(columns) > 1 else ""))
    for i, step in enumerate(STEPS):
        print(f"{step:14}" + "".join(f" {column[i]:>9}" for column in columns))


if __name__ == "__main__":
    main()
