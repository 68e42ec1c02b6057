"""The long fuzz run behind docs/RELIABILITY.md: the harness of tests/fuzz_calls.py
(reproducible by seed) for N calls in process, counting internal errors and unanswered
calls, with the call rate.

    .venv/bin/python bench/fuzz_calls.py --calls 100000 --seed 1
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz.test_fuzz_odd_input import NO_SERVERS, call_in_process, public_tools
from tests.fuzz_calls import FuzzReport, fuzz_calls, make_fuzz_workspace
from tests.helpers import make_runtime


async def run(count: int, seed: int, chunk: int) -> FuzzReport:
    report = FuzzReport()
    started = time.monotonic()
    done = 0
    while done < count:
        # A fresh workspace per chunk: writers move and delete the fixture files.
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "ws"
            make_fuzz_workspace(root)
            runtime = make_runtime(root, NO_SERVERS)
            size = min(chunk, count - done)
            for call in fuzz_calls(public_tools(runtime), size, seed + done):
                report.record(call, await call_in_process(runtime, call))
        done += size
        rate = done / (time.monotonic() - started)
        print(
            f"{done} calls, {rate:.0f} calls/s, internal errors {len(report.internal_errors)},"
            f" unanswered {len(report.unanswered)}",
            flush=True,
        )
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chunk", type=int, default=2000)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    report = asyncio.run(run(args.calls, args.seed, args.chunk))
    print("codes:", dict(report.codes.most_common()))
    for line in report.internal_errors[:20]:
        print("internal:", line)
    print(
        f"SUMMARY {report.calls} calls: {len(report.internal_errors)} internal errors, "
        f"{len(report.unanswered)} unanswered"
    )


if __name__ == "__main__":
    main()
