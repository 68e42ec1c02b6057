"""The editor arm of bench/lsp_overhead.py: a headless Neovim (bench/lsp_overhead_editor.lua)
runs its own language server for the buffer and the toolhost plugin, which starts
`toolhost serve`; the agent's lsp_definition reaches that server over its attach socket and
is answered through toolhost/lspRequest by the editor's server.

Two clients here, both raw: the attach socket's JSON-RPC (one JSON line per message, the
protocol `toolhost mcp --attach` forwards each MCP call over, see lsp_server/mcp/wire.py) and
a control pipe to Neovim that times one of the editor's own definition requests inside
Neovim (vim.uv.hrtime around client:request).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from lsp_server.attach import attach_records, wire

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(__file__).resolve().parent / "lsp_overhead_editor.lua"
PLUGIN = ROOT / "extension" / "nvim"


def find_nvim() -> str | None:
    for candidate in (os.environ.get("TOOLHOST_NVIM"), str(ROOT / ".tools/neovim/bin/nvim")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class EditorArm:
    def __init__(self, nvim: str, home: Path, root: Path, env: dict[str, str]) -> None:
        self.nvim, self.home, self.root = nvim, home, root
        self.env = {
            **env,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "XDG_RUNTIME_DIR": str(home / "run"),
            "TOOLHOST_STATE_DIR": str(home / "state" / "toolhost"),
        }
        (home / "run").mkdir(parents=True, mode=0o700)
        self.ids = 1

    async def start(
        self, server_name: str, server_cmd: list[str], file: str, line: int, character: int
    ) -> float:
        """Neovim up, its server warm (its own definition answered), toolhost attached to
        the editor; returns the seconds the editor's own first answer took."""
        self.stderr = self.home / "nvim.stderr"
        control, ready = self.home / "control.sock", self.home / "ready.json"
        config = {
            "workspace": str(self.root),
            "file": file,
            "server_name": server_name,
            "server_cmd": server_cmd,
            "line": line,
            "character": character,
            "plugin": str(PLUGIN),
            "toolhost_cmd": [str(Path(sys.executable).parent / "toolhost"), "serve"],
            "control": str(control),
            "ready": str(ready),
        }
        with self.stderr.open("wb") as stderr:
            self.process = await asyncio.create_subprocess_exec(
                self.nvim,
                "--headless",
                "--clean",
                "-l",
                str(SCRIPT),
                cwd=self.root,
                env={**self.env, "TOOLHOST_BENCH_EDITOR": json.dumps(config)},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
            )
        while not ready.exists():
            if self.process.returncode is not None:
                raise RuntimeError(f"Neovim ended: {self.stderr.read_text()[-3000:]}")
            await asyncio.sleep(0.05)
        own_first: float = json.loads(ready.read_text())["own_first_ns"] / 1e9
        self.control = await asyncio.open_unix_connection(str(control))
        await self._attach()
        return own_first

    async def _attach(self) -> None:
        folder = Path(self.env["XDG_RUNTIME_DIR"]) / "toolhost"
        for _ in range(400):
            records = attach_records.find_records(folder, self.root)
            if records:
                break
            await asyncio.sleep(0.05)
        else:
            raise RuntimeError("the editor's toolhost published no attach record")
        record = records[0]
        self.reader, self.writer = await asyncio.open_unix_connection(
            str(record.socket), limit=wire.LINE_LIMIT
        )
        client = {"name": "bench", "version": "1"}
        await self._request(wire.ATTACH, {"token": record.token, "client": client})

    async def _request(self, method: str, params: Any) -> Any:
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        self.writer.write(wire.encode(message))
        while True:
            reply = await wire.read_message(self.reader)
            if reply is None:
                raise RuntimeError("the editor's toolhost closed the attach socket")
            if reply.get("id") == self.ids:
                if "error" in reply:
                    raise RuntimeError(reply["error"])
                return reply["result"]

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        """One toolhost/call on the attach socket; the text of its answer."""
        result = await self._request(wire.CALL, {"name": name, "arguments": arguments})
        text = "\n".join(p["text"] for p in result["content"] if p.get("type") == "text")
        if result.get("isError"):
            raise RuntimeError(text)
        return text

    async def own_request(self) -> tuple[float, float]:
        """The editor's own definition request: (seconds inside Neovim, seconds seen here)."""
        reader, writer = self.control
        started = time.perf_counter()
        writer.write(b"own\n")
        answer = json.loads(await reader.readline())
        seen = time.perf_counter() - started
        if not answer["found"]:
            raise RuntimeError("the editor's server answered its own request empty")
        return answer["ns"] / 1e9, seen

    async def stop(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            self.control[1].write(b"quit\n")
        try:
            await asyncio.wait_for(self.process.wait(), 20)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, 9)
            await self.process.wait()
