"""Writers under load (issue 28, target 6): 50 sessions on one `toolhost serve` connection,
each reading and editing its own file (read_file, then edit_file, 49 rounds: 98 calls per
session), every session's calls in flight at once. The same mix runs with checkpoints on
and with them off, on fresh servers in the same run, and prints calls/s for both.

    .venv/bin/python bench/writers_load.py [--sessions 50] [--rounds 49] [--repeats 3]
        [--code before=/path/to/an/older/checkout]

The client is a raw asyncio JSON-RPC client (frames by hand) so that its own cost stays
small beside the server's. After each run with checkpoints on it checks that every edit
has its checkpoint (toolhost/checkpoints lists sessions x rounds of them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.compiled import compile_code


class AsyncRawClient:
    """LSP frames over a child's pipes; many requests in flight, answered by id."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read_all())
        self._reader.add_done_callback(self._reader_ended)

    def _reader_ended(self, task: asyncio.Task[None]) -> None:
        """A reader that died fails every request still waiting (no silent hang)."""
        if task.cancelled() or task.exception() is None:
            return
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(
                    RuntimeError(f"the client's reader died: {task.exception()!r}")
                )

    @classmethod
    async def start(cls, state: Path, code: str | None) -> AsyncRawClient:
        env = {**os.environ, "TOOLHOST_STATE_DIR": str(state)}
        if code is not None:  # another checkout's lsp_server (--code)
            env["PYTHONPATH"] = code
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "lsp_server",
            "serve",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
            cwd=code,  # `-m` puts the working folder first on sys.path
            limit=1 << 24,
        )
        return cls(process)

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: Any) -> Any:
        wanted = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[wanted] = future
        self._send({"id": wanted, "method": method, "params": params})
        return await future

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    async def _read_all(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = await stream.readline()
                if not line:
                    for future in self._waiting.values():
                        future.set_exception(EOFError("the server closed its output"))
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(await stream.readexactly(length))
            if "method" in message:
                if message["method"] == "window/logMessage" and message["params"]["type"] <= 2:
                    print("server:", message["params"]["message"], file=sys.stderr)
                if "id" in message:  # a server request (configuration, ...): a null answer
                    self._send({"id": message["id"], "result": None})
                continue
            future = self._waiting.pop(message["id"])
            if "error" in message:
                future.set_exception(RuntimeError(message["error"]))
            else:
                future.set_result(message.get("result"))

    async def close(self) -> None:
        try:
            await self.request("shutdown", None)
            self.notify("exit", None)
            await asyncio.wait_for(self.process.wait(), 10)
        except (EOFError, BrokenPipeError, ConnectionResetError, TimeoutError):
            self.process.kill()
            await self.process.wait()
        self._reader.cancel()


def make_files(root: Path, sessions: int) -> None:
    for i in range(sessions):
        lines = [f"# file of session {i}\n"] + [f"line {n} of s{i}\n" for n in range(60)]
        (root / f"s{i:02d}.py").write_text("value = 0\n" + "".join(lines))


async def session_work(client: AsyncRawClient, i: int, rounds: int) -> int:
    path, name, calls = f"s{i:02d}.py", f"s{i:02d}", 0
    for r in range(rounds):
        read = await client.request(
            "toolhost/call", {"name": "read_file", "arguments": {"path": path}, "session": name}
        )
        edit = await client.request(
            "toolhost/call",
            {
                "name": "edit_file",
                "arguments": {
                    "path": path,
                    "old_string": f"value = {r}\n",
                    "new_string": f"value = {r + 1}\n",
                },
                "session": name,
            },
        )
        calls += 2
        for result in (read, edit):
            if result["isError"]:
                raise SystemExit(f"{name} round {r}: {result['content'][0]['text']}")
    return calls


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) and of its children, those it
    waited for (the checkpoints' git) and those still running (Linux /proc): work handed to
    another process still counts."""
    total = 0
    for child in [pid, *children_of(pid)]:
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(field) for field in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


def children_of(pid: int) -> list[int]:
    """Every live descendant of `pid` (a thread's children are listed under that thread)."""
    found: list[int] = []
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for child in map(int, listing.read_text().split()):
                found += [child, *children_of(child)]
    return found


async def one_run(
    sessions: int, rounds: int, checkpoints: bool, code: str | None = None
) -> tuple[float, float]:
    """calls/s, and the server's CPU milliseconds per call (less sensitive to the load)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "ws"
        root.mkdir()
        make_files(root, sessions)
        client = await AsyncRawClient.start(Path(folder) / "state", code)
        options = {
            "policy": {"mode": "bypass"},
            "checkpoints": {"enabled": checkpoints, "max_checkpoints": 10_000},
        }
        await client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {},
                "initializationOptions": {"toolhost": options},
            },
        )
        client.notify("initialized", {})
        await client.request("toolhost/status", {})
        started = time.perf_counter()
        cpu = cpu_seconds(client.process.pid)
        done = await asyncio.gather(*(session_work(client, i, rounds) for i in range(sessions)))
        wall = time.perf_counter() - started
        if checkpoints:
            listed = await client.request("toolhost/checkpoints", {"limit": sessions * rounds + 10})
            count = len(listed["checkpoints"])
            if count != sessions * rounds:
                raise SystemExit(f"{count} checkpoints listed, {sessions * rounds} expected")
        cpu = cpu_seconds(client.process.pid) - cpu  # the listing's flush included
        await client.close()
        for i in range(sessions):
            text = (root / f"s{i:02d}.py").read_text()
            assert text.startswith(f"value = {rounds}\n"), f"s{i:02d}: {text[:20]!r}"
    return sum(done) / wall, cpu * 1000 / sum(done)


async def main_async(
    sessions: int, rounds: int, repeats: int, codes: dict[str, str | None]
) -> None:
    rates: dict[tuple[str, bool], list[float]] = {}
    cpus: dict[tuple[str, bool], list[float]] = {}
    for _ in range(repeats):
        for label, code in codes.items():
            for checkpoints in (False, True):  # alternated: load drifts over the run
                rate, cpu = await one_run(sessions, rounds, checkpoints, code)
                rates.setdefault((label, checkpoints), []).append(rate)
                cpus.setdefault((label, checkpoints), []).append(cpu)
                state = "on " if checkpoints else "off"
                print(
                    f"{label}: checkpoints {state}: {rate:6.0f} calls/s, "
                    f"server CPU {cpu:.3f} ms/call (load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
    for label in codes:
        on, off = (statistics.median(rates[label, c]) for c in (True, False))
        cpu_on, cpu_off = (statistics.median(cpus[label, c]) for c in (True, False))
        print(
            f"{label}: {sessions} sessions x {2 * rounds} calls, median of {repeats}: "
            f"checkpoints on {on:.0f} calls/s, off {off:.0f} calls/s, on/off {on / off:.2f}; "
            f"server CPU per call on {cpu_on:.3f} ms, off {cpu_off:.3f} ms, "
            f"off/on {cpu_off / cpu_on:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=49, help="read + edit pairs per session")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--code",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="also run the server from another checkout (before/after in one run)",
    )
    args = parser.parse_args()
    codes: dict[str, str | None] = {"this tree": None}
    for item in args.code:
        label, _, folder = item.partition("=")
        codes[label] = str(Path(folder).resolve())
    compile_code(*codes.values())
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}", flush=True)
    asyncio.run(main_async(args.sessions, args.rounds, args.repeats, codes))


if __name__ == "__main__":
    main()
