"""Spawn -> `initialize` answer: `toolhost serve` beside a bare pygls server, same run,
interleaved, medians of N, printed with the difference and the ratio.

    .venv/bin/python bench/startup.py [--runs 10] [--baseline DIR]

--baseline DIR adds a third arm: the `toolhost serve` of another checkout (e.g. a worktree
of an earlier commit), run with this interpreter, so a change is measured before and after
in the same run.
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

from bench.compiled import compile_code
from bench.rawrpc import RawClient

BARE_PYGLS = "from pygls.lsp.server import LanguageServer\nLanguageServer('bare', '1').start_io()\n"


def cpu_seconds(pid: int, main_thread: bool = False) -> float:
    """A process's user + system CPU time so far (Linux /proc): work, whatever the load.
    `main_thread`: its first thread's only (toolhost's warm-up thread starts once the
    initialize answer is written, while the client is still reading it)."""
    stat = Path(f"/proc/{pid}/task/{pid}/stat" if main_thread else f"/proc/{pid}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_to_initialize(
    command: list[str], root: Path, env: dict[str, str], cwd: Path | None = None
) -> tuple[float, float]:
    """(wall seconds from spawn to the initialize answer, the server's CPU seconds then)."""
    started = time.perf_counter()
    client = RawClient(command, env=env, cwd=cwd, stderr=open(os.devnull, "wb"))  # noqa: SIM115
    client.request(
        "initialize",
        {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}},
    )
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds(client.process.pid, main_thread=True)
    client.notify("initialized", {})
    client.close()
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--baseline", type=Path, help="another checkout to time beside this one")
    args = parser.parse_args()
    compile_code(args.baseline)
    here = Path(__file__).resolve().parents[1]
    arms = {
        "toolhost serve": [sys.executable, "-m", "lsp_server", "serve"],
        "bare pygls": [sys.executable, "-c", BARE_PYGLS],
    }
    # `python -m` looks in the working folder first: each arm runs in its own checkout.
    folders = {name: here for name in arms}
    if args.baseline is not None:
        arms["baseline serve"] = [sys.executable, "-m", "lsp_server", "serve"]
        folders["baseline serve"] = args.baseline.resolve()
    samples: dict[str, list[float]] = {name: [] for name in arms}
    cpu: dict[str, list[float]] = {name: [] for name in arms}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "ws"
        root.mkdir()
        # A state folder per arm: the capability cache holds one version's answer, so two
        # versions sharing it would each find the other's and build the registry before
        # answering, every time (a cost no user with one version pays).
        envs = {
            name: {**os.environ, "TOOLHOST_STATE_DIR": str(Path(folder) / f"state-{n}")}
            for n, name in enumerate(arms)
        }
        for name, command in arms.items():  # warm the page cache once, not measured
            time_to_initialize(command, root, envs[name], folders[name])
        for _ in range(args.runs):
            for name, command in arms.items():
                wall, used = time_to_initialize(command, root, envs[name], folders[name])
                samples[name].append(wall)
                cpu[name].append(used)
    medians = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    cpus = {name: statistics.median(values) * 1000 for name, values in cpu.items()}
    for name, median in medians.items():
        print(
            f"{name:<16} median {median:7.1f} ms  (min {min(samples[name]) * 1000:.1f}); "
            f"main thread's CPU to the answer {cpus[name]:.0f} ms"
        )
    toolhost, bare = medians["toolhost serve"], medians["bare pygls"]
    print(f"toolhost adds {toolhost - bare:.1f} ms ({toolhost / bare:.2f}x bare pygls)")
    print(
        f"toolhost's CPU to the answer adds {cpus['toolhost serve'] - cpus['bare pygls']:.0f} ms "
        f"({cpus['toolhost serve'] / cpus['bare pygls']:.2f}x bare pygls)"
    )
    if "baseline serve" in medians:
        baseline = medians["baseline serve"]
        print(
            f"this checkout vs baseline: {toolhost - baseline:+.1f} ms ({toolhost / baseline:.2f}x)"
        )


if __name__ == "__main__":
    main()
