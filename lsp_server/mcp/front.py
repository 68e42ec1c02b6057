"""`toolhost mcp` before the MCP SDK is loaded: the standard library only.

Importing the SDK (pydantic models of two protocol revisions, starlette) takes longer than
the official filesystem server needs to answer `initialize`. So the front claims stdin and
stdout, starts importing the SDK and toolhost's MCP server in a thread, and answers a
well-formed `initialize` of the handshake revisions itself, with the answer the SDK gives
(tests/mcp/test_front.py compares the two for every revision). Everything it read is then
handed to the SDK in order, the `initialize` request included, so that the SDK's session
knows the client; the SDK's own answer to that request is not sent again (mcp/pipes.py).
Anything else (the stateless 2026-07-28 revision, an odd `initialize`, stdin or stdout
that is not a pipe) waits for the SDK and gets its answer, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import importlib
import json
import logging
import os
import stat
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from lsp_server import __version__

log = logging.getLogger(__name__)

SERVER_NAME = "toolhost"
INSTRUCTIONS = (
    "toolhost: file, search, shell and code tools with stale-write protection. Read a file "
    "before editing it; a truncated result names the use_capability call that pages it."
)
CAPABILITIES: dict[str, Any] = {"tools": {"listChanged": False}}
# The SDK's HANDSHAKE_PROTOCOL_VERSIONS (mcp_types.version), oldest first: the revisions
# that open with `initialize`. The newest is the counter-offer to any other version.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LINE_LIMIT = 64 * 1024 * 1024
SERVER_MODULE = "lsp_server.mcp.server"


def initialize_answer(message: Any) -> dict[str, Any] | None:
    """The SDK's answer to this `initialize` request, or None when the SDK must answer it
    (not an `initialize`, or anything in it the SDK might refuse)."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    message_id = message.get("id")
    if message.get("jsonrpc") != "2.0" or not _plain_id(message_id):
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not set(params) <= {
        "protocolVersion",
        "capabilities",
        "clientInfo",
    }:
        return None
    requested = params.get("protocolVersion")
    if not isinstance(requested, str) or not _plain_capabilities(params.get("capabilities")):
        return None
    info = params.get("clientInfo")
    if not isinstance(info, dict) or not set(info) <= {"name", "version", "title"}:
        return None
    if not all(isinstance(info.get(key), str) for key in ("name", "version")):
        return None
    if not isinstance(info.get("title", ""), str):
        return None
    version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "result": {
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
            "protocolVersion": version,
            "serverInfo": {"name": SERVER_NAME, "version": __version__},
        },
    }


def _plain_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _plain_capabilities(value: Any) -> bool:
    """Client capabilities of plain objects whose members are flags or objects."""
    if not isinstance(value, dict):
        return False
    for member in value.values():
        if not isinstance(member, dict):
            return False
        if not all(isinstance(inner, bool | dict) for inner in member.values()):
            return False
    return True


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` holding .git or .toolhost.toml, else `start`."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists() or (folder / ".toolhost.toml").exists():
            return folder
    return start


class Pipes:
    """The client's stdin and stdout, read and written on the event loop (no thread hop per
    message). While they are served, fd 0 reads the null device and fd 1 writes to stderr,
    so that nothing else in the process (or a child) reads or writes the wire."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.pending: list[bytes] = []
        """Lines the front read before the SDK was loaded, oldest first."""
        self.answered: Any = None
        """The id of the `initialize` request the front answered, if it did."""
        self.client: dict[str, str] | None = None
        """The client's name and version, from that request."""

    async def read_line(self) -> bytes:
        """The next line; b"" at end of input. A line over LINE_LIMIT is read to its end and
        returned cut, so the SDK answers it as the parse error it is."""
        try:
            return await self.reader.readline()
        except ValueError:  # over the limit: the reader dropped what it had
            while not (rest := await self.reader.readline()).endswith(b"\n") and rest:
                pass
            return b"{\n"

    def write(self, data: bytes) -> None:
        self.writer.write(data)

    async def drain(self) -> None:
        await self.writer.drain()


def _is_stream(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.asynccontextmanager
async def claim_stdio() -> Any:
    """Pipes over private duplicates of fd 0 and 1, or None when either is not a pipe or a
    socket (a file or a terminal: the SDK's own transport serves it, as before)."""
    if not (_is_stream(0) and _is_stream(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    private_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    private_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    stdin = os.fdopen(private_in, "rb", buffering=0, closefd=False)
    stdout = os.fdopen(private_out, "wb", buffering=0, closefd=False)
    try:
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        try:
            yield Pipes(reader, writer)
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                await asyncio.wait_for(writer.drain(), 5)
            transport.close()
    finally:
        os.dup2(private_in, 0)
        os.dup2(private_out, 1)


class Loader:
    """Imports toolhost's MCP server (and with it the SDK) in a thread, from process start."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._module: ModuleType | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._load, name="toolhost-mcp-import", daemon=True).start()

    def _load(self) -> None:
        try:
            self._module = importlib.import_module(SERVER_MODULE)
        except BaseException as exc:  # re-raised on the loop, where the process ends
            self._error = exc
        self._done.set()

    async def module(self) -> ModuleType:
        if not self._done.is_set():
            await asyncio.to_thread(self._done.wait)
        if self._error is not None:
            raise self._error
        assert self._module is not None
        return self._module


async def serve(loader: Loader, root: Path, surface: str, session: str, attach: str) -> None:
    async with claim_stdio() as pipes:
        if pipes is None:
            server = await loader.module()
            await server.serve(root, surface, session, attach)
            return
        first = await pipes.read_line()
        if first:
            pipes.pending.append(first)
            try:
                message = json.loads(first)
            except ValueError:
                message = None
            answer = initialize_answer(message)
            if answer is not None:
                pipes.write(json.dumps(answer, separators=(",", ":")).encode() + b"\n")
                pipes.answered = answer["id"]
                info = message["params"]["clientInfo"]
                pipes.client = {"name": info["name"], "version": info["version"]}
        server = await loader.module()
        await server.serve_pipes(pipes, root, surface, session, attach)


def main(root: Path | None, surface: str, session: str, attach: str) -> int:
    loader = Loader()  # first: the import runs while the rest starts
    logging.basicConfig(
        level=os.environ.get("TOOLHOST_LOG", "WARNING").upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    resolved = (root or find_root(Path.cwd())).resolve()
    if not resolved.is_dir():
        print(f"toolhost mcp: --root {resolved} is not a folder", file=sys.stderr)
        return 2
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        asyncio.run(serve(loader, resolved, surface, session, attach))
    return 0
