"""`toolhost mcp` beside the official filesystem MCP server (Node,
`@modelcontextprotocol/server-filesystem`, pinned by bench/npm/package-lock.json and
installed by scripts/setup/65-bench-peers.sh), both driven by the same raw JSON-RPC client
over stdio (bench/rawrpc.py, one JSON message per line), arms interleaved:

- start -> initialize answered (median of --starts fresh processes),
- the first tools/list and the first read after `notifications/initialized` in each of them
  (sent at once, the way an agent does: initialize, initialized, tools/list, tools/call),
- a 4 KiB read, --calls calls on one warm process per arm, p50 / p95.

    .venv/bin/python bench/peers.py [--starts 10] [--calls 500] [--rounds 2]

Ratios are toolhost / filesystem server. toolhost runs as a user runs it: the venv's
`toolhost mcp` entry point, `--attach auto` with no editor serving the workspace.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rawrpc import RawClient

HERE = Path(__file__).resolve().parents[1]
FILESYSTEM = HERE / ".tools/bench-peers/node_modules/@modelcontextprotocol/server-filesystem"
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench-peers", "version": "1"},
}


class Arm:
    """One server: how to start it and how to ask it to read the file."""

    def __init__(self, name: str, command: list[str], read: Callable[[Path], dict[str, Any]]):
        self.name = name
        self.command = command
        self.read = read

    def start(self, root: Path, env: dict[str, str]) -> RawClient:
        return RawClient(self.command, framing="line", cwd=root, env=env, stderr=subprocess.DEVNULL)


def toolhost_command(root: Path) -> list[str]:
    script = Path(sys.executable).with_name("toolhost")
    entry = [str(script)] if script.exists() else [sys.executable, "-m", "lsp_server.cli"]
    return [*entry, "mcp", "--root", str(root)]


def arms(root: Path) -> list[Arm]:
    node = shutil.which("node")
    index = FILESYSTEM / "dist/index.js"
    if node is None or not index.exists():
        sys.exit(f"no filesystem server at {index}: run scripts/setup/65-bench-peers.sh")
    target = root / "file.txt"
    return [
        Arm(
            "toolhost mcp",
            toolhost_command(root),
            lambda _: {"name": "read_file", "arguments": {"path": "file.txt"}},
        ),
        Arm(
            "server-filesystem",
            [node, str(index), str(root)],
            lambda _: {"name": "read_text_file", "arguments": {"path": str(target)}},
        ),
    ]


def checked(result: Any) -> Any:
    if not isinstance(result, dict) or result.get("isError"):
        raise RuntimeError(f"the call failed: {result!r}"[:500])
    return result


def cold_start(arm: Arm, root: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """Spawn -> initialize answered; then, at once, tools/list and the first read."""
    started = time.perf_counter()
    client = arm.start(root, env)
    try:
        client.request("initialize", INITIALIZE)
        initialized = time.perf_counter()
        client.notify("notifications/initialized", {})
        t0 = time.perf_counter()
        tools = client.request("tools/list", {})
        listed = time.perf_counter() - t0
        assert tools["tools"], tools
        t0 = time.perf_counter()
        checked(client.request("tools/call", arm.read(root)))
        first = time.perf_counter() - t0
    finally:
        client.close()
    return initialized - started, listed, first


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=2, help="read blocks per arm, interleaved")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="peers") as folder:
        base = Path(folder)
        root = base / "ws"
        root.mkdir()
        (root / ".git").mkdir()
        line = "the quick brown fox jumps over the lazy dog, 0123456789 abcdefghij\n"
        text = (line * (4096 // len(line) + 1))[:4095] + "\n"
        (root / "file.txt").write_text(text)
        (base / "run").mkdir(mode=0o700)
        env = {
            **os.environ,
            "TOOLHOST_STATE_DIR": str(base / "state"),
            "XDG_RUNTIME_DIR": str(base / "run"),  # no editor's toolhost to attach to
            "XDG_CONFIG_HOME": str(base / "config"),
        }
        peers = arms(root)
        before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        print(f"load before: {before}", flush=True)
        for arm in peers:  # page cache and the capability cache, not measured
            cold_start(arm, root, env)
        starts: dict[str, list[tuple[float, float, float]]] = {a.name: [] for a in peers}
        for n in range(options.starts):
            for arm in peers if n % 2 == 0 else reversed(peers):
                starts[arm.name].append(cold_start(arm, root, env))
        reads: dict[str, list[float]] = {a.name: [] for a in peers}
        clients = {}
        for arm in peers:
            client = arm.start(root, env)
            client.request("initialize", INITIALIZE)
            client.notify("notifications/initialized", {})
            for _ in range(50):  # warm up
                checked(client.request("tools/call", arm.read(root)))
            clients[arm.name] = client
        per_round = max(1, options.calls // options.rounds)
        for n in range(options.rounds):
            for arm in peers if n % 2 == 0 else reversed(peers):
                client, params = clients[arm.name], arm.read(root)
                for _ in range(per_round):
                    t0 = time.perf_counter()
                    checked(client.request("tools/call", params))
                    reads[arm.name].append(time.perf_counter() - t0)
        for client in clients.values():
            client.close()
        after = " ".join(Path("/proc/loadavg").read_text().split()[:3])

    ours, theirs = (a.name for a in peers)

    def median_of(name: str, column: int) -> float:
        return statistics.median(s[column] for s in starts[name]) * 1000

    rows = [
        (f"start -> initialize answered (median of {options.starts})", 0),
        ("first tools/list", 1),
        ("first read after initialized", 2),
    ]
    print(f"\n| | {ours} | {theirs} | ratio |\n| --- | --- | --- | --- |")
    for label, column in rows:
        a, b = median_of(ours, column), median_of(theirs, column)
        print(f"| {label} | {a:.0f} ms | {b:.0f} ms | {a / b:.2f}x |")
    pa = [percentile(reads[ours], f) * 1000 for f in (0.5, 0.95)]
    pb = [percentile(reads[theirs], f) * 1000 for f in (0.5, 0.95)]
    print(
        f"| 4 KiB read x{len(reads[ours])}, p50 / p95 | {pa[0]:.2f} / {pa[1]:.2f} ms "
        f"| {pb[0]:.2f} / {pb[1]:.2f} ms | {pa[0] / pb[0]:.2f}x / {pa[1] / pb[1]:.2f}x |"
    )
    print(f"\nload after: {after}")


if __name__ == "__main__":
    main()
