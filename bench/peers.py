"""`toolhost mcp` beside the official filesystem MCP server (Node,
`@modelcontextprotocol/server-filesystem`, pinned by bench/npm/package-lock.json and
installed by scripts/setup/65-bench-peers.sh), both driven by the same raw JSON-RPC client
over stdio (bench/rawrpc.py, one JSON message per line), arms interleaved:

- start -> initialize answered (median of --starts fresh processes),
- the first tools/list and the first read after `notifications/initialized` in each of them
  (sent at once, the way an agent does: initialize, initialized, tools/list, tools/call),
- a 4 KiB read, --calls calls on one warm process per arm, p50 / p95.

    .venv/bin/python bench/peers.py [--starts 10] [--calls 500] [--rounds 2] [--floor]
        [--first-start] [--modern] [--editor] [--warm] [--baseline DIR ...]

--first-start: each start in a state folder of its own, nothing kept from an earlier start
(a new install, or the first start after an upgrade: no tools/list kept). --modern:
toolhost's arms speak MCP 2026-07-28 as Claude Code does (server/discover; the revision,
client and capabilities in each request's `_meta`); the filesystem server keeps initialize.
--editor: one more arm, `toolhost mcp` beside an editor's `toolhost serve` (started once,
initialized on the workspace, its attach record in the arm's own runtime folder): every
call runs in that warm runtime (the design target 1 of issue 28 weighs against a local one).
--warm: one more arm, `toolhost mcp --warm`: each start handed to the warm process
(lsp_server/warm), which the unmeasured first start of the arm starts; the bench waits for
it to serve before it measures.

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
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.compiled import compile_code
from bench.rawrpc import RawClient

HERE = Path(__file__).resolve().parents[1]
FILESYSTEM = HERE / ".tools/bench-peers/node_modules/@modelcontextprotocol/server-filesystem"
# The SDK's own floor: its low-level server over its stdio transport, a tools/call handler
# that answers the same 4 KiB text without doing anything (`--floor`).
SDK_ECHO_SERVER = """
import sys
import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TEXT = open(sys.argv[1], encoding="utf-8").read()
TOOL = types.Tool(name="read_file", input_schema={"type": "object"})


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx, params):
    return {"content": [{"type": "text", "text": TEXT}], "isError": False}


server = Server("echo", on_list_tools=list_tools, on_call_tool=call_tool)
server.middleware = []


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench-peers", "version": "1"},
}
# --modern: MCP 2026-07-28 as Claude Code 2.1.328 speaks it (no initialize; each request's
# `_meta` names the revision, the client and its capabilities).
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench-peers", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    },
}


class Arm:
    """One server: how to start it and how to ask it to read the file."""

    def __init__(
        self,
        name: str,
        command: list[str],
        read: Callable[[Path], dict[str, Any]],
        env: dict[str, str] | None = None,
    ):
        self.name = name
        self.command = command
        self.read = read
        self.env = env or {}
        self.modern = False
        self.calls = 0

    def open(self, client: RawClient) -> None:
        """The opening: `initialize` and `initialized`, or 2026-07-28's `server/discover`."""
        if self.modern:
            client.request("server/discover", {"_meta": MODERN_META})
            return
        client.request("initialize", INITIALIZE)
        client.notify("notifications/initialized", {})

    def params(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "_meta": MODERN_META} if self.modern else params

    def call(self, root: Path) -> dict[str, Any]:
        """A read's params; on 2026-07-28 with what Claude Code adds to each call's `_meta`
        (its tool use id and a progress token)."""
        if not self.modern:
            return self.read(root)
        self.calls += 1
        own = {"claudecode/toolUseId": f"toolu_{self.calls:08d}", "progressToken": self.calls}
        return {**self.read(root), "_meta": {**MODERN_META, **own}}

    def start(self, root: Path, env: dict[str, str]) -> RawClient:
        merged = {**env, **self.env}
        if "TOOLHOST_STATE_DIR" in env:  # each version its own (its tools/list cache)
            slug = "".join(c if c.isalnum() else "-" for c in self.name)
            merged["TOOLHOST_STATE_DIR"] = f"{env['TOOLHOST_STATE_DIR']}-{slug}"
        return RawClient(
            self.command, framing="line", cwd=root, env=merged, stderr=subprocess.DEVNULL
        )


def toolhost_command(root: Path) -> list[str]:
    script = Path(sys.executable).with_name("toolhost")
    entry = [str(script)] if script.exists() else [sys.executable, "-m", "lsp_server.cli"]
    return [*entry, "mcp", "--root", str(root)]


def arms(root: Path, floor: bool, baselines: list[Path]) -> list[Arm]:
    node = shutil.which("node")
    index = FILESYSTEM / "dist/index.js"
    if node is None or not index.exists():
        sys.exit(f"no filesystem server at {index}: run scripts/setup/65-bench-peers.sh")
    target = root / "file.txt"
    extra = []
    for baseline in baselines:  # another checkout's lsp_server, on the same venv
        label = "baseline" if len(baselines) == 1 else baseline.name
        extra.append(
            Arm(
                f"toolhost mcp ({label})",
                toolhost_command(root),
                lambda _: {"name": "read_file", "arguments": {"path": "file.txt"}},
                env={"PYTHONPATH": str(baseline.resolve())},
            )
        )
    if floor:
        script = root.parent / "sdk_echo_server.py"
        script.write_text(SDK_ECHO_SERVER)
        extra.append(
            Arm(
                "toolhost front, runtime taken out",
                [sys.executable, str(HERE / "bench/front_floor.py"), *toolhost_command(root)[-3:]],
                lambda _: {"name": "read_file", "arguments": {"path": "file.txt"}},
            )
        )
        extra.append(
            Arm(
                "SDK echo server",
                [sys.executable, str(script), str(target)],
                lambda _: {"name": "read_file", "arguments": {"path": "file.txt"}},
            )
        )
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
        *extra,
    ]


class EditorServing:
    """An editor's `toolhost serve` on the workspace, its attach record under `runtime`. A
    helper process plays the editor (a raw LSP client: initialize, initialized, then reads
    all the server sends, answering its requests with null), so that neither the server's
    pipe fills nor this process's clock shares a GIL with the draining."""

    def __init__(self, root: Path, runtime: Path, env: dict[str, str]) -> None:
        runtime.mkdir(mode=0o700)
        self.env = {**env, "XDG_RUNTIME_DIR": str(runtime)}
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--play-editor", str(root)],
            env=self.env,
            stdin=subprocess.PIPE,
        )
        for _ in range(400):
            if any((runtime / "toolhost").glob("*.json")):
                return
            time.sleep(0.05)
        sys.exit("the editor's toolhost serve published no attach record")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()  # the helper shuts its server down
        self.process.wait()


def play_editor(root: Path) -> None:
    """The helper of EditorServing: serve `root` until stdin closes."""
    command = [sys.executable, "-m", "lsp_server", "serve"]
    client = RawClient(command, cwd=root, stderr=subprocess.DEVNULL)
    client.request(
        "initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}}
    )
    client.notify("initialized", {})

    def drain() -> None:
        try:
            while True:
                message = client.read()
                if "method" in message and "id" in message:
                    client.send({"id": message["id"], "result": None})
        except (EOFError, OSError, ValueError):
            pass

    threading.Thread(target=drain, daemon=True).start()
    sys.stdin.read()
    client.process.terminate()
    client.process.wait()


def checked(result: Any) -> Any:
    if not isinstance(result, dict) or result.get("isError"):
        raise RuntimeError(f"the call failed: {result!r}"[:500])
    return result


def cold_start(arm: Arm, root: Path, env: dict[str, str], agent_delay: float) -> tuple[float, ...]:
    """Spawn -> initialize answered; then, at once, tools/list (its own time and the time
    from spawn) and the first read; in a second process, the first read sent `agent_delay`
    after spawn (the earliest an agent's first model turn comes back with a call)."""
    started = time.perf_counter()
    client = arm.start(root, env)
    try:
        arm.open(client)
        initialized = t0 = time.perf_counter()
        tools = client.request("tools/list", arm.params({}))
        listed = time.perf_counter()
        assert tools["tools"], tools
        t1 = time.perf_counter()
        checked(client.request("tools/call", arm.call(root)))
        answered = time.perf_counter()
        first = answered - t1
    finally:
        client.close()
    started_late = time.perf_counter()
    client = arm.start(root, env)
    try:
        arm.open(client)
        client.request("tools/list", arm.params({}))
        time.sleep(max(0.0, started_late + agent_delay - time.perf_counter()))
        t1 = time.perf_counter()
        checked(client.request("tools/call", arm.call(root)))
        late = time.perf_counter() - t1
    finally:
        client.close()
    return initialized - started, listed - t0, listed - started, first, late, answered - started


def wait_for_warm_process(folder: Path) -> None:
    """Until the warm process the first `--warm` start started serves (it exits by itself
    once its folder is gone, with the bench's temporary folder)."""
    deadline = time.monotonic() + 60
    while not list(folder.glob("warm-*.sock")):
        if time.monotonic() > deadline:
            sys.exit(f"no warm process serves in {folder} after 60 s")
        time.sleep(0.1)


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=2, help="read blocks per arm, interleaved")
    parser.add_argument(
        "--agent-delay",
        type=float,
        default=1.0,
        help="seconds from spawn to the later first read (Codex sends its first model "
        "request 1.0-1.1 s after spawning its MCP servers)",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also the SDK's own floor (an echo server) and toolhost's front with the "
        "runtime taken out (bench/front_floor.py: every call answers the first call's result)",
    )
    parser.add_argument(
        "--modern",
        action="store_true",
        help="toolhost's arms speak MCP 2026-07-28 as Claude Code does (server/discover, "
        "`_meta` on each request); the filesystem server keeps initialize",
    )
    parser.add_argument(
        "--first-start",
        action="store_true",
        help="each start in a fresh state folder (nothing kept: a new install or an upgrade)",
    )
    parser.add_argument(
        "--editor",
        action="store_true",
        help="also `toolhost mcp` beside an editor's `toolhost serve` (its calls run there)",
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="also `toolhost mcp --warm` (each start handed to a warm process)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        action="append",
        default=[],
        help="a folder holding another version's lsp_server/ (e.g. `git archive main "
        "lsp_server | tar -x -C DIR`): measured as another arm, interleaved; repeatable "
        "(each arm is named by its folder)",
    )
    parser.add_argument("--play-editor", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.play_editor:
        play_editor(options.play_editor)
        return
    compile_code(*options.baseline)
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
        peers = arms(root, options.floor, options.baseline)
        editor = None
        if options.editor:
            editor = EditorServing(root, base / "run-editor", env)
            attached = Arm(
                "toolhost mcp (editor serving)",
                toolhost_command(root),
                lambda _: {"name": "read_file", "arguments": {"path": "file.txt"}},
                env={"XDG_RUNTIME_DIR": editor.env["XDG_RUNTIME_DIR"]},
            )
            peers.insert(2, attached)
        if options.warm:
            warm = Arm(
                "toolhost mcp --warm",
                [*toolhost_command(root), "--warm"],
                lambda _: {"name": "read_file", "arguments": {"path": "file.txt"}},
            )
            peers.insert(2, warm)
        for arm in peers:
            arm.modern = options.modern and arm.name.startswith("toolhost")
        before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        print(f"load before: {before}", flush=True)
        for arm in peers:  # page cache and the capability cache, not measured
            cold_start(arm, root, env, options.agent_delay)
        if options.warm:
            wait_for_warm_process(base / "run" / "toolhost")
        starts: dict[str, list[tuple[float, ...]]] = {a.name: [] for a in peers}
        for n in range(options.starts):
            fresh = {"TOOLHOST_STATE_DIR": str(base / f"state-{n}")} if options.first_start else {}
            for arm in peers if n % 2 == 0 else reversed(peers):
                starts[arm.name].append(
                    cold_start(arm, root, {**env, **fresh}, options.agent_delay)
                )
        reads: dict[str, list[float]] = {a.name: [] for a in peers}
        clients = {}
        for arm in peers:
            client = arm.start(root, env)
            arm.open(client)
            for _ in range(50):  # warm up
                result = checked(client.request("tools/call", arm.call(root)))
            runtime = result.get("_meta", {}).get("toolhost", {}).get("runtime", "")
            if arm.name.endswith("(editor serving)") and not runtime.startswith("editor"):
                sys.exit(f"{arm.name}: the calls ran in {runtime!r}, not the editor's runtime")
            clients[arm.name] = client
        per_round = max(1, options.calls // options.rounds)
        for n in range(options.rounds):
            for arm in peers if n % 2 == 0 else reversed(peers):
                client = clients[arm.name]
                for _ in range(per_round):
                    params = arm.call(root)
                    t0 = time.perf_counter()
                    checked(client.request("tools/call", params))
                    reads[arm.name].append(time.perf_counter() - t0)
        for client in clients.values():
            client.close()
        if editor is not None:
            editor.close()
        after = " ".join(Path("/proc/loadavg").read_text().split()[:3])

    names = [a.name for a in peers]
    ours, theirs = names[0], names[1]

    def median_of(name: str, column: int) -> float:
        return statistics.median(s[column] for s in starts[name]) * 1000

    opening = "server/discover (toolhost) / initialize" if options.modern else "initialize"
    rows = [
        (f"start -> {opening} answered (median of {options.starts})", 0),
        ("first tools/list, sent at once after the opening", 1),
        ("start -> tools/list answered", 2),
        ("first read, sent at once after tools/list", 3),
        ("start -> that first read answered", 5),
        (f"first read, sent {options.agent_delay:g} s after start", 4),
    ]
    head = " | ".join(names)
    print(f"\n| | {head} | ratio |\n|{' --- |' * (len(names) + 2)}")
    for label, column in rows:
        values = [median_of(name, column) for name in names]
        cells = " | ".join(f"{v:.0f} ms" for v in values)
        print(f"| {label} | {cells} | {values[0] / values[1]:.2f}x |")
    p50 = {n: percentile(reads[n], 0.5) * 1000 for n in names}
    p95 = {n: percentile(reads[n], 0.95) * 1000 for n in names}
    cells = " | ".join(f"{p50[n]:.2f} / {p95[n]:.2f} ms" for n in names)
    print(
        f"| 4 KiB read x{len(reads[ours])}, p50 / p95 | {cells} "
        f"| {p50[ours] / p50[theirs]:.2f}x / {p95[ours] / p95[theirs]:.2f}x |"
    )
    print(f"\nload after: {after}")


if __name__ == "__main__":
    main()
