"""Round trip of `toolhost/call read_file` (a 4 KiB file) over stdio, measured with a raw
JSON-RPC client (frames written and read by hand) and with pygls' client, beside the same
call made in-process, so the protocol overhead and the client's own cost are visible.

    .venv/bin/python bench/call_latency.py [--calls 2000] [--starts 5] [--raw-only]
        [--pause 1.0] [--baseline DIR]

The first calls of fresh servers are timed sent at once after `initialized` and `--pause`
seconds later; --baseline DIR times another checkout's `toolhost serve` beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.compiled import compile_code
from bench.peers import wait_for_warm_process
from bench.rawrpc import RawClient
from lsp_server.cli.lsp_json_client import plain_json_converter
from tests.helpers import call_tool, make_runtime


def _summary(label: str, samples: list[float], wall: float) -> dict[str, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[int(len(ordered) * 0.99) - 1] * 1000
    rate = len(samples) / wall
    print(f"{label:<22} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   {rate:8.0f} calls/s")
    return {"p50": p50, "p99": p99, "rate": rate}


async def _over_stdio(root: Path, calls: int) -> dict[str, float]:
    client = LanguageClient("bench", "1", converter_factory=plain_json_converter)

    @client.feature("toolhost/didCall")  # type: ignore[misc]
    def _ignore(params: object) -> None:
        """Activity notifications are not measured."""

    await client.start_io(sys.executable, "-m", "lsp_server", "serve")
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=root.as_uri())
    )
    client.initialized(types.InitializedParams())
    params = {"name": "read_file", "arguments": {"path": "file.txt"}, "session": "bench"}
    for _ in range(50):  # warm up
        await client.protocol.send_request_async("toolhost/call", params)
    samples = []
    started = time.perf_counter()
    for _ in range(calls):
        t0 = time.perf_counter()
        await client.protocol.send_request_async("toolhost/call", params)
        samples.append(time.perf_counter() - t0)
    wall = time.perf_counter() - started
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()  # type: ignore[no-untyped-call]
    return _summary("pygls client (stdio)", samples, wall)


def _raw_stdio(
    root: Path, calls: int, cwd: Path | None = None, label: str = "", warm: bool = False
) -> dict[str, float]:
    """toolhost/call read_file beside toolhost/status (the transport's floor: a request the
    server answers without a tool), alternated on one connection; `cwd`: another checkout.
    The call's didCall is awaited before the status request goes: a call's reports follow
    its answer, and a status sent at once would otherwise pay for them. `warm`: a child of
    the warm process serves (`toolhost serve --warm`)."""
    command = [sys.executable, "-m", "lsp_server", "serve", *(["--warm"] if warm else [])]
    client = RawClient(command, cwd=cwd, env=_env_for(root, cwd))
    client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    params = {"name": "read_file", "arguments": {"path": "file.txt"}, "session": "bench"}
    for _ in range(50):  # warm up
        client.request("toolhost/call", params)
        client.wait_for("toolhost/didCall")
        client.request("toolhost/status", {})
    samples, floor = [], []
    started = time.perf_counter()
    for _ in range(calls):
        t0 = time.perf_counter()
        client.request("toolhost/call", params)
        t1 = time.perf_counter()
        client.wait_for("toolhost/didCall")  # outside both timings
        t1_floor = time.perf_counter()
        client.request("toolhost/status", {})
        floor.append(time.perf_counter() - t1_floor)
        samples.append(t1 - t0)
    wall = time.perf_counter() - started
    client.close()
    status = _summary(f"{label}toolhost/status (raw)", floor, wall)
    result = _summary(f"{label}raw client (stdio)", samples, wall)
    print(f"{label}toolhost/call / toolhost/status at p50: {result['p50'] / status['p50']:.2f}x")
    return result


def _cpu_seconds(pid: int, main_thread: bool = False) -> float:
    """A process's user + system CPU time so far (Linux /proc): work, whatever the load.
    `main_thread`: its first thread's only (toolhost's warm-up thread starts once the
    initialize answer is written, while the client is still reading it)."""
    stat = Path(f"/proc/{pid}/task/{pid}/stat" if main_thread else f"/proc/{pid}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _env_for(root: Path, cwd: Path | None) -> dict[str, str]:
    """A state folder per checkout, beside the workspace: the capability cache holds one
    version's answer, so two versions sharing it would each miss and build the registry
    before every initialize answer (a cost no user with one version pays)."""
    state = root.parent / ("state-baseline" if cwd is not None else "state-this")
    runtime = root.parent / "run"  # attach records and warm processes: the bench's own
    runtime.mkdir(mode=0o700, exist_ok=True)
    return {**os.environ, "TOOLHOST_STATE_DIR": str(state), "XDG_RUNTIME_DIR": str(runtime)}


def _first_call(
    root: Path, pause: float, cwd: Path | None, warm: bool = False
) -> tuple[float, ...]:
    """A fresh `toolhost serve`: (initialize answered, the first toolhost/call's round trip,
    the server's CPU seconds up to the answer, and from the answer to the first call's),
    that call sent `pause` seconds after `initialized`. `warm`: `toolhost serve --warm` (the
    CPU columns are then the front's, which only waits)."""
    t0 = time.perf_counter()
    command = [sys.executable, "-m", "lsp_server", "serve", *(["--warm"] if warm else [])]
    client = RawClient(command, cwd=cwd, env=_env_for(root, cwd))
    client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
    init = time.perf_counter() - t0
    cpu_at_answer = _cpu_seconds(client.process.pid, main_thread=True)
    client.notify("initialized", {})
    if pause:
        time.sleep(pause)  # an agent's first tool call comes after its first model turn
    t1 = time.perf_counter()
    client.request(
        "toolhost/call",
        {"name": "read_file", "arguments": {"path": "file.txt"}, "session": "bench"},
    )
    first = time.perf_counter() - t1
    cpu_after = _cpu_seconds(client.process.pid) - cpu_at_answer
    client.close()
    return init, first, cpu_at_answer, cpu_after


def _first_calls(root: Path, starts: int, pause: float, baseline: Path | None, warm: bool) -> None:
    """Fresh servers: the first toolhost/call sent at once after `initialized` (what is left
    of the runtime's warm-up then is the floor), and sent `pause` seconds later."""
    arms: dict[str, tuple[float, Path | None, bool]] = {"at once": (0.0, None, False)}
    if pause:
        arms[f"after {pause:g} s"] = (pause, None, False)
    if baseline is not None:
        arms["baseline, at once"] = (0.0, baseline, False)
        if pause:
            arms[f"baseline, after {pause:g} s"] = (pause, baseline, False)
    if warm:
        arms["--warm, at once"] = (0.0, None, True)
        _first_call(root, 0.0, None, warm=True)  # starts the warm process
        wait_for_warm_process(root.parent / "run" / "toolhost")
    samples: dict[str, list[tuple[float, ...]]] = {name: [] for name in arms}
    for _ in range(starts):  # interleaved, so that the load is shared
        for name, (wait, cwd, warm_start) in arms.items():
            samples[name].append(_first_call(root, wait, cwd, warm_start))
    for name, rows in samples.items():
        init, first, cpu_init, cpu_rest = (
            statistics.median(row[i] for row in rows) * 1000 for i in range(4)
        )
        print(
            f"fresh server, median of {starts}, first call {name:<18}: initialize {init:.0f} ms, "
            f"first toolhost/call {first:.1f} ms; server CPU to the answer {cpu_init:.0f} ms, "
            f"answer to first call {cpu_rest:.0f} ms"
        )


async def _in_process(root: Path, calls: int) -> dict[str, float]:
    runtime = make_runtime(root)
    for _ in range(50):
        await call_tool(runtime, "read_file", {"path": "file.txt"}, session="bench")
    samples = []
    started = time.perf_counter()
    for _ in range(calls):
        t0 = time.perf_counter()
        await call_tool(runtime, "read_file", {"path": "file.txt"}, session="bench")
        samples.append(time.perf_counter() - t0)
    return _summary("Runtime.call (in-proc)", samples, time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--starts", type=int, default=5, help="fresh servers for the first call")
    parser.add_argument("--raw-only", action="store_true", help="only the raw client's arms")
    parser.add_argument(
        "--pause", type=float, default=1.0, help="seconds between initialized and a first call"
    )
    parser.add_argument("--baseline", type=Path, help="another checkout's serve, timed beside")
    parser.add_argument(
        "--warm", action="store_true", help="also `toolhost serve --warm`'s first call at once"
    )
    args = parser.parse_args()
    compile_code(args.baseline)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "ws"
        root.mkdir()
        line = "the quick brown fox jumps over the lazy dog, 0123456789 abcdefghij\n"
        (root / "file.txt").write_text(line * (4096 // len(line)))
        _first_calls(root, args.starts, args.pause, args.baseline, args.warm)
        raw = _raw_stdio(root, args.calls)
        if args.baseline is not None:
            _raw_stdio(root, args.calls, args.baseline.resolve(), "baseline ")
        if args.warm:
            _raw_stdio(root, args.calls, label="--warm ", warm=True)
        if args.raw_only:
            return
        stdio = asyncio.run(_over_stdio(root, args.calls))
        local = asyncio.run(_in_process(root, args.calls))
    overhead = raw["p50"] - local["p50"]
    print(
        f"protocol overhead at p50 (raw client): {overhead:.3f} ms "
        f"({raw['p50'] / local['p50']:.2f}x in-process); "
        f"pygls' client adds {stdio['p50'] - raw['p50']:.3f} ms per call"
    )


if __name__ == "__main__":
    main()
