"""`read_file` round trip over MCP (local runtime, and attached to an editor's toolhost)
beside `toolhost/call` over LSP, in the same run; start-up to the `initialize` answer of
`toolhost mcp` beside a minimal server on the same SDK.

Raw JSON-RPC clients (Content-Length framing for LSP, one JSON line per message for MCP) so
that the client costs the same on every arm; the SDK's own client is measured too, to show
what it adds on top.

    .venv/bin/python bench/mcp_latency.py [--calls 1000] [--rounds 3] [--starts 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsp_server.attach import attach_records
from lsp_server.home.dirs import Dirs

TOOLHOST = [sys.executable, "-m", "lsp_server.cli"]
MINIMAL_SDK_SERVER = """
import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
import mcp_types as types

async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[])

server = Server("minimal", on_list_tools=list_tools)

async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}


class LineClient:
    """MCP over stdio: one JSON message per line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        while True:
            reply = json.loads(await self.process.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def notify(self, method: str) -> None:
        assert self.process.stdin
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")


class LspClient:
    """LSP over stdio: Content-Length framing; notifications from the server are skipped."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self) -> dict[str, Any]:
        assert self.process.stdout
        length = 0
        while (line := await self.process.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message: dict[str, Any] = json.loads(await self.process.stdout.readexactly(length))
        return message

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            reply = await self._read()
            if reply.get("id") == self.next_id and "method" not in reply:
                return reply

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})


async def spawn(*command: str, cwd: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *command,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=16 * 1024 * 1024,
    )


async def stop(process: asyncio.subprocess.Process) -> None:
    assert process.stdin
    process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 10)
    except TimeoutError:
        process.kill()
        await process.wait()


async def time_calls(call: Any, calls: int) -> list[float]:
    for _ in range(50):  # warm up
        await call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def mcp_arm(root: Path, env: dict[str, str], attach: str, calls: int) -> list[float]:
    process = await spawn(
        *TOOLHOST, "mcp", "--root", str(root), "--attach", attach, cwd=root, env=env
    )
    client = LineClient(process)
    await client.request("initialize", INITIALIZE)
    client.notify("notifications/initialized")
    params = {"name": "read_file", "arguments": {"path": "file.txt"}}
    first = await client.request("tools/call", params)
    served = first["result"]["_meta"]["toolhost"]["runtime"]
    assert served.startswith("editor") == (attach == "require"), served

    async def call() -> None:
        reply = await client.request("tools/call", params)
        assert not reply["result"]["isError"], reply

    try:
        return await time_calls(call, calls)
    finally:
        await stop(process)


async def sdk_client_arm(root: Path, env: dict[str, str], calls: int) -> list[float]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(
        command=TOOLHOST[0],
        args=[*TOOLHOST[1:], "mcp", "--root", str(root), "--attach", "never"],
        env=env,
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def call() -> None:
            await session.call_tool("read_file", {"path": "file.txt"})

        return await time_calls(call, calls)


async def start_lsp(
    root: Path, env: dict[str, str]
) -> tuple[asyncio.subprocess.Process, LspClient]:
    process = await spawn(*TOOLHOST, "serve", cwd=root, env=env)
    client = LspClient(process)
    await client.request(
        "initialize", {"capabilities": {}, "rootUri": root.as_uri(), "processId": os.getpid()}
    )
    client.notify("initialized", {})
    for _ in range(200):
        if attach_records.find_records(Dirs.from_environment().attach_folder, root):
            break
        await asyncio.sleep(0.05)
    return process, client


async def lsp_timing(client: LspClient, calls: int) -> list[float]:
    params = {"name": "read_file", "arguments": {"path": "file.txt"}, "session": "bench"}

    async def call() -> None:
        reply = await client.request("toolhost/call", params)
        assert not reply["result"]["isError"], reply

    return await time_calls(call, calls)


async def time_start(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    process = await spawn(*command, cwd=cwd, env=env)
    client = LineClient(process)
    reply = await client.request("initialize", INITIALIZE)
    elapsed = time.perf_counter() - started
    assert "result" in reply, reply
    await stop(process)
    return elapsed


def summary(label: str, samples: list[float]) -> float:
    ordered = sorted(samples)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[max(0, int(len(ordered) * 0.99) - 1)] * 1000
    print(f"  {label:<34} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
    return p50


async def main(calls: int, starts: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="mcpbench") as folder:
        base = Path(folder)
        root = base / "ws"
        root.mkdir()
        (root / ".git").mkdir()
        (root / "file.txt").write_text(
            "".join(f"line {n} of the benchmark file\n" for n in range(130))
        )
        runtime = base / "run"
        runtime.mkdir(mode=0o700)
        env = {
            **os.environ,
            "TOOLHOST_STATE_DIR": str(base / "state"),
            "XDG_RUNTIME_DIR": str(runtime),
            "XDG_CONFIG_HOME": str(base / "config"),
        }
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"read_file of a 4 KiB file, {rounds} x {calls} calls per arm (load average {load})")
        lsp_process, lsp = await start_lsp(root, env)
        arms: dict[str, list[float]] = {"lsp": [], "local": [], "attached": []}
        try:
            # Interleaved rounds, so that a load spike on this shared machine hits every arm.
            for _ in range(rounds):
                arms["lsp"] += await lsp_timing(lsp, calls)
                arms["local"] += await mcp_arm(root, env, "never", calls)
                arms["attached"] += await mcp_arm(root, env, "require", calls)
            sdk = await sdk_client_arm(root, env, calls)
        finally:
            await stop(lsp_process)
        lsp_p50 = summary("LSP toolhost/call (raw client)", arms["lsp"])
        local_p50 = summary("MCP tools/call, local (raw)", arms["local"])
        attached_p50 = summary("MCP tools/call, attached (raw)", arms["attached"])
        sdk_p50 = summary("MCP tools/call, local (SDK client)", sdk)
        print(f"  local MCP / LSP: {local_p50 / lsp_p50:.2f}x (target <= 1.3x)")
        print(f"  attach adds: {attached_p50 - local_p50:+.3f} ms over local MCP (target <= 1 ms)")
        print(f"  the SDK client adds: {sdk_p50 - local_p50:+.3f} ms over the raw client")

        script = base / "minimal_sdk_server.py"
        script.write_text(MINIMAL_SDK_SERVER)
        ours, minimal = [], []
        for _ in range(starts):
            minimal.append(await time_start([sys.executable, str(script)], root, env))
            ours.append(await time_start([*TOOLHOST, "mcp", "--root", str(root)], root, env))
        ours_ms = statistics.median(ours) * 1000
        minimal_ms = statistics.median(minimal) * 1000
        print(f"start-up to the initialize answer, median of {starts}:")
        print(f"  minimal SDK server {minimal_ms:7.0f} ms")
        added = ours_ms - minimal_ms
        print(f"  toolhost mcp       {ours_ms:7.0f} ms   ({added:+.0f} ms; target <= +300 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.starts, options.rounds))
