"""`read_file` round trip over `toolhost mcp --http` beside the same call over `toolhost mcp`
on stdio, in the same run, arms interleaved in rounds.

Both arms use raw clients: one JSON line per message on stdio; on HTTP one keep-alive httpx
connection, a POST per call with the session id and the bearer token, the answer read from
the SSE body. The HTTP arm is what an HTTP client pays on top of the same runtime: the HTTP
request, the gate (Host, Origin, token), the SDK's session routing and SSE framing.

    .venv/bin/python bench/mcp_http_latency.py [--calls 500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.mcp_latency import INITIALIZE, time_calls

TOOLHOST = [sys.executable, "-m", "lsp_server.cli"]
READ = {"name": "read_file", "arguments": {"path": "data.txt"}}
SERVING = re.compile(rb"at (http://127\.0\.0\.1:\d+/mcp); bearer token in (.+)$")


class StdioArm:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    async def request(self, method: str, params: Any) -> Any:
        assert self.process.stdin and self.process.stdout
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        while True:
            reply = json.loads(await self.process.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    async def call(self) -> None:
        reply = await self.request("tools/call", READ)
        assert not reply["result"]["isError"], reply


class HttpArm:
    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.http = httpx.AsyncClient(timeout=60)
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        self.next_id = 0

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        answer = await self.http.post(self.url, json=message, headers=self.headers)
        answer.raise_for_status()
        if "mcp-session-id" in answer.headers:
            self.headers["mcp-session-id"] = answer.headers["mcp-session-id"]
        data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1]) if data else None

    async def notify(self, method: str) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        (await self.http.post(self.url, json=message, headers=self.headers)).raise_for_status()

    async def call(self) -> None:
        reply = await self.request("tools/call", READ)
        assert not reply["result"]["isError"], reply


def read_token(path: str) -> str:
    return Path(path).read_text().strip()


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(samples) * 1000:.3f} ms, p99 {p99 * 1000:.1f} ms"


async def main(calls: int, rounds: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="mcp-http-bench-"))
    (root / ".git").mkdir()
    (root / "data.txt").write_text(("x" * 63 + "\n") * 64)  # 4 KiB
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(root.parent / f"{root.name}-state")}
    base = [*TOOLHOST, "mcp", "--root", str(root), "--attach", "never"]
    stdio_process = await asyncio.create_subprocess_exec(
        *base,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    http_process = await asyncio.create_subprocess_exec(
        *base, "--http", "127.0.0.1:0", env=env, stderr=asyncio.subprocess.PIPE
    )
    try:
        stdio = StdioArm(stdio_process)
        await stdio.request("initialize", INITIALIZE)
        assert stdio_process.stdin
        notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        stdio_process.stdin.write(json.dumps(notice).encode() + b"\n")
        assert http_process.stderr
        while not (match := SERVING.search((await http_process.stderr.readline()).strip())):
            pass
        token = read_token(match.group(2).decode())
        http = HttpArm(match.group(1).decode(), token)
        await http.request("initialize", INITIALIZE)
        await http.notify("notifications/initialized")
        results: dict[str, list[float]] = {"stdio": [], "http": []}
        for _ in range(rounds):
            results["stdio"] += await time_calls(stdio.call, calls)
            results["http"] += await time_calls(http.call, calls)
        await http.http.aclose()
    finally:
        for process in (stdio_process, http_process):
            process.terminate()
            await process.wait()
    print(f"read_file 4 KiB, {calls} calls x {rounds} rounds, load {os.getloadavg()[0]:.1f}")
    for arm, samples in results.items():
        print(f"  {arm:6} {summary(samples)}")
    ratio = statistics.median(results["http"]) / statistics.median(results["stdio"])
    print(f"  http / stdio (p50): {ratio:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.rounds))
