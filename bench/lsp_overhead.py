"""lsp_definition through toolhost vs the same request from a minimal direct client, and
through a real editor's language server, all in one run.

All arms talk to the same language server binary, each on its own copy of the same fixture
project:

- direct: the smallest LSP client to the server (the reference);
- toolhost: lsp_definition on toolhost's own server (a runtime in this process): cold (its
  first answer on a fresh runtime, spawn included) and warm;
- editor: a headless Neovim (.tools/neovim, bench/lsp_overhead_editor.lua) runs the server
  for the buffer with vim.lsp.start, as a user's config does, and the toolhost plugin
  (extension/nvim), which starts `toolhost serve`. The agent's lsp_definition goes to that
  server over its attach socket, and toolhost asks the editor (toolhost/lspRequest, answered
  by lsp_proxy.lua through the editor's server). "First" is the agent's first call once the
  editor's server is warm (the editor has answered its own request): the figure to hold
  against toolhost's cold spawn. "Warm" is held against the editor's own request, timed in
  Neovim around client:request: the difference is what toolhost adds (agent socket, dispatch,
  the lspRequest round trip to Neovim, the plugin's proxy, formatting).

Why the attach socket for the agent: it is the path an agent outside the editor takes (`toolhost
mcp --attach` forwards each MCP call over it), and a raw JSON-RPC client on it (one JSON line
per message) costs next to nothing, so the figure is toolhost's own. `toolhost mcp` in between
would add its relay and the MCP framing (bench/mcp_latency.py measures those); calling
through the plugin's Lua API (require('toolhost').call) would put the caller on the same
Neovim loop that answers the proxy request and send the call over the editor's own
connection, which no agent uses.

Warm runs are interleaved A/B (load on the shared machine hits every arm alike); the ratio
of medians and the milliseconds added per call are printed.

    .venv/bin/python bench/lsp_overhead.py [--language python|typescript|c] [--runs 200]
        [--no-editor]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.editor_arm import EditorArm, find_nvim  # noqa: E402
from lsp_server.compose import build_runtime  # noqa: E402
from lsp_server.config.tree import Config  # noqa: E402
from lsp_server.home.dirs import Dirs  # noqa: E402
from lsp_server.langservers.discovery import resolve_server  # noqa: E402
from lsp_server.langservers.manager import LanguageServerManager  # noqa: E402
from lsp_server.langservers.positions import find_symbol, split_lines  # noqa: E402
from lsp_server.langservers.table import ROWS_BY_NAME  # noqa: E402
from lsp_server.protocol import CallParams  # noqa: E402
from lsp_server.runtime.approvals.verdicts import ModeApprover  # noqa: E402
from lsp_server.runtime.dispatch import Runtime  # noqa: E402
from lsp_server.runtime.lifecycle import Lifecycle  # noqa: E402

FIXTURES = ROOT / "tests" / "langservers" / "fixtures"
CASES = {
    "python": ("python", "main.py", 8, "make_circle"),
    "typescript": ("typescript", "src/main.ts", 7, "makeCircle"),
    "c": ("c", "main.c", 6, "make_circle"),
}


class DirectClient:
    """The smallest LSP client that gets definitions: framing, ids, null answers."""

    def __init__(self, command: list[str], root: Path, env: dict[str, str]) -> None:
        self.command, self.root, self.env = command, root, env
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=self.root,
            env=self.env,
            start_new_session=True,
        )
        self.reader = asyncio.ensure_future(self.read())

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await future

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def read(self) -> None:
        assert self.proc.stdout is not None
        stream = self.proc.stdout
        while True:
            length = 0
            while (line := await stream.readline()).strip():
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not length:
                return
            message = json.loads(await stream.readexactly(length))
            if "method" in message and "id" in message:
                items = (message.get("params") or {}).get("items", [])
                result: list[dict[str, Any]] | None = (
                    [{}] * len(items) if message["method"] == "workspace/configuration" else None
                )
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif "id" in message and message["id"] in self.pending:
                self.pending.pop(message["id"]).set_result(message.get("result"))

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.request("shutdown", None), 5)
            self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), 5)
        except (TimeoutError, ConnectionError):
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, 9)
        self.reader.cancel()


def copy_project(language: str, into: Path) -> Path:
    root = (into / language).resolve()
    shutil.copytree(FIXTURES / language, root)
    if language == "c":
        database = [
            {"directory": str(root), "file": str(p), "arguments": ["cc", "-c", p.name]}
            for p in sorted(root.glob("*.c"))
        ]
        (root / "compile_commands.json").write_text(json.dumps(database))
    return root


async def start_direct(
    language: str, tmp: Path
) -> tuple[float, float, DirectClient, dict[str, Any]]:
    fixture, file, line, symbol = CASES[language]
    root = copy_project(fixture, tmp / "direct")
    server = resolve_server(ROWS_BY_NAME[fixture], root, {})
    path = root / file
    text = path.read_text()
    column = find_symbol(split_lines(text)[line - 1], symbol)  # ASCII line: same in UTF-16
    client = DirectClient(list(server.command), root, server.child_env())
    started = time.perf_counter()
    await client.start()
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": {"workspace": {"configuration": True}},
        },
    )
    initialized = time.perf_counter() - started
    client.notify("initialized", {})
    client.notify("workspace/didChangeConfiguration", {"settings": {}})
    uri = path.as_uri()
    language_id = ROWS_BY_NAME[fixture].extensions[path.suffix]
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text}},
    )
    params = {"textDocument": {"uri": uri}, "position": {"line": line - 1, "character": column}}
    first = None
    while not first:  # a server may answer empty while it loads: ask until it knows
        first = await client.request("textDocument/definition", params)
    first_answer = time.perf_counter() - started
    return initialized, first_answer, client, params


async def start_toolhost(
    language: str, tmp: Path
) -> tuple[float, str, Runtime, CallParams, Lifecycle]:
    fixture, file, line, symbol = CASES[language]
    root = copy_project(fixture, tmp / "toolhost")
    dirs = Dirs(state=tmp / "state", config=tmp / "config")
    runtime, lifecycle = build_runtime(
        [root], Config(), dirs=dirs, approver=ModeApprover("bypass", "deny"), long_lived=False
    )
    params = CallParams(
        name="lsp_definition", arguments={"path": file, "line": line, "symbol": symbol}
    )
    started = time.perf_counter()
    result = await runtime.call(params)
    first_answer = time.perf_counter() - started
    answer = result.content[0]["text"]
    return first_answer, answer, runtime, params, lifecycle


def describe(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(len(ordered) * 0.9) - 1]
    return f"median {statistics.median(ordered) * 1000:.2f} ms, p90 {p90 * 1000:.2f} ms"


async def start_editor(language: str, tmp: Path) -> tuple[EditorArm, float, float, str]:
    """The editor arm, warm; (arm, editor's own first answer, agent's first answer, answer)."""
    nvim = find_nvim()
    if nvim is None:
        raise SystemExit("Neovim not found: run scripts/setup/40-neovim.sh, or pass --no-editor")
    fixture, file, line, symbol = CASES[language]
    root = copy_project(fixture, tmp / "editor")
    server = resolve_server(ROWS_BY_NAME[fixture], root, {})
    column = find_symbol(split_lines((root / file).read_text())[line - 1], symbol)
    arm = EditorArm(nvim, tmp / "editor-home", root, server.child_env())
    name = server.program.name.removesuffix("-langserver")
    own_first = await arm.start(name, list(server.command), file, line - 1, column)
    started = time.perf_counter()
    answer = await arm.call("lsp_definition", {"file": file, "line": line, "symbol": symbol})
    first = time.perf_counter() - started
    if "answered by the editor's" not in answer:
        raise RuntimeError(f"not answered by the editor's server: {answer}")
    return arm, own_first, first, answer


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--language", choices=sorted(CASES), default="python")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--no-editor", action="store_true", help="leave the Neovim arm out")
    args = parser.parse_args()
    os.environ.setdefault("TOOLHOST_STATE_DIR", tempfile.mkdtemp(prefix="toolhost-bench-state-"))
    samples: dict[str, list[float]] = {
        k: [] for k in ("direct", "toolhost", "rpc", "editor_own", "editor_seen", "editor")
    }
    _, file, line, symbol = CASES[args.language]
    arguments = {"file": file, "line": line, "symbol": symbol}
    with tempfile.TemporaryDirectory(prefix="lsp-bench-") as tmp_name:
        tmp = Path(tmp_name)
        initialized, direct_first, client, direct_params = await start_direct(args.language, tmp)
        toolhost_first, answer, runtime, params, lifecycle = await start_toolhost(
            args.language, tmp
        )
        editor = None
        if not args.no_editor:
            editor, own_first, editor_first, editor_answer = await start_editor(args.language, tmp)
        # Warm-up, then A/B interleaved so that load on the machine hits every arm alike.
        # A third arm splits toolhost's share: its JSON-RPC client alone (same request on
        # toolhost's connection to its own server) vs the whole lsp_definition call.
        (own,) = runtime.services.get(LanguageServerManager).clients()
        own_params = {**direct_params}
        own_params["textDocument"] = {"uri": (own.root / file).as_uri()}
        try:
            for number in range(20 + args.runs):
                begin = time.perf_counter()
                await client.request("textDocument/definition", direct_params)
                middle = time.perf_counter()
                await runtime.call(params)
                end = time.perf_counter()
                await own.process.request("textDocument/definition", own_params, 30)
                last = time.perf_counter()
                round_times = [middle - begin, end - middle, last - end]
                if editor is not None:
                    inside, seen = await editor.own_request()
                    before = time.perf_counter()
                    await editor.call("lsp_definition", arguments)
                    round_times += [inside, seen, time.perf_counter() - before]
                if number >= 20:
                    for key, value in zip(samples, round_times, strict=False):
                        samples[key].append(value)
        finally:
            await client.stop()
            await lifecycle.shutdown()
            if editor is not None:
                await editor.stop()
    direct_median = statistics.median(samples["direct"])
    toolhost_median = statistics.median(samples["toolhost"])
    print(f"language server: {args.language} ({args.runs} warm runs each); answer: {answer}")
    print(f"direct client  warm: {describe(samples['direct'])}")
    print(f"toolhost       warm: {describe(samples['toolhost'])}")
    print(f"  of which its JSON-RPC client alone: {describe(samples['rpc'])}")
    print(
        f"overhead: {toolhost_median / direct_median:.2f}x the direct median, "
        f"{(toolhost_median - direct_median) * 1000:.2f} ms added per call"
    )
    print(
        f"cold: server start (spawn -> initialize answered) {initialized * 1000:.0f} ms; "
        f"direct first definition {direct_first * 1000:.0f} ms; "
        f"toolhost first lsp_definition {toolhost_first * 1000:.0f} ms"
    )
    if editor is None:
        return
    added = median_ms(samples["editor"]) - median_ms(samples["editor_own"])
    print(f"editor arm (Neovim's own server, agent on the attach socket); answer: {editor_answer}")
    print(f"editor's own request, timed in Neovim: {describe(samples['editor_own'])}")
    print(f"  the same, timed here through the control pipe: {describe(samples['editor_seen'])}")
    print(f"agent's lsp_definition via the editor warm: {describe(samples['editor'])}")
    print(
        f"overhead: {median_ms(samples['editor']) / median_ms(samples['editor_own']):.2f}x the "
        f"editor's own median, {added:.2f} ms added per call (target: at most 5 ms)"
    )
    print(
        f"first: editor's own first answer (server start included) {own_first * 1000:.0f} ms; "
        f"agent's first lsp_definition from the warm editor {editor_first * 1000:.0f} ms "
        f"(target: under 200 ms) = {toolhost_first / editor_first:.1f}x faster than "
        f"toolhost's cold spawn ({toolhost_first * 1000:.0f} ms)"
    )


if __name__ == "__main__":
    asyncio.run(main())
