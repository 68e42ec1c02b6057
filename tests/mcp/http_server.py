"""`toolhost mcp --http 127.0.0.1:PORT` as a subprocess, for the HTTP tests: where it serves
(read from the line it prints at start) and the token from the file that line names."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs

from tests.mcp.clients import toolhost_command

_SERVING = re.compile(r"at (http://127\.0\.0\.1:(\d+)/mcp); bearer token in (.+)$")


@attrs.frozen
class HttpMcp:
    url: str
    port: int
    token_file: Path
    token: str
    process: asyncio.subprocess.Process

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@asynccontextmanager
async def http_mcp(root: Path, *args: str, port: int = 0) -> AsyncIterator[HttpMcp]:
    process = await asyncio.create_subprocess_exec(
        *toolhost_command(),
        "mcp",
        "--root",
        str(root),
        "--attach",
        "never",
        "--http",
        f"127.0.0.1:{port}",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ),
        cwd=root,
    )
    assert process.stderr is not None
    seen: list[str] = []
    match = None
    while match is None:
        # A generous bound for a busy machine, not a timing assertion.
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line, f"toolhost mcp --http ended before serving: {''.join(seen)}"
        seen.append(line)
        match = _SERVING.search(line.strip())
    drain = asyncio.create_task(process.stderr.read())
    token_file = Path(match.group(3))
    server = HttpMcp(
        match.group(1), int(match.group(2)), token_file, token_file.read_text().strip(), process
    )
    try:
        yield server
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 30)
            except TimeoutError:
                process.kill()
                await process.wait()
        drain.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await drain
