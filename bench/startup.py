"""Spawn -> `initialize` answer: `toolhost serve` beside a bare pygls server, same run,
interleaved, medians of N, printed with the difference and the ratio.

    .venv/bin/python bench/startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rawrpc import RawClient

BARE_PYGLS = "from pygls.lsp.server import LanguageServer\nLanguageServer('bare', '1').start_io()\n"


def time_to_initialize(command: list[str], root: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    client = RawClient(command, env=env, stderr=open(os.devnull, "wb"))  # noqa: SIM115
    client.request(
        "initialize",
        {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}},
    )
    elapsed = time.perf_counter() - started
    client.notify("initialized", {})
    client.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    arms = {
        "toolhost serve": [sys.executable, "-m", "lsp_server", "serve"],
        "bare pygls": [sys.executable, "-c", BARE_PYGLS],
    }
    samples: dict[str, list[float]] = {name: [] for name in arms}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "ws"
        root.mkdir()
        env = {**os.environ, "TOOLHOST_STATE_DIR": str(Path(folder) / "state")}
        for command in arms.values():  # warm the page cache once, not measured
            time_to_initialize(command, root, env)
        for _ in range(args.runs):
            for name, command in arms.items():
                samples[name].append(time_to_initialize(command, root, env))
    medians = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    for name, median in medians.items():
        print(f"{name:<16} median {median:7.1f} ms  (min {min(samples[name]) * 1000:.1f})")
    toolhost, bare = medians["toolhost serve"], medians["bare pygls"]
    print(f"toolhost adds {toolhost - bare:.1f} ms ({toolhost / bare:.2f}x bare pygls)")


if __name__ == "__main__":
    main()
