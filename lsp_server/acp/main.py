"""`toolhost acp` on stdio: our stdin/stdout are the editor's connection, the agent is our
child; logs go to stderr (which editors show in their ACP logs)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path

from lsp_server.acp.proxy import Proxy
from lsp_server.home.dirs import Dirs


async def _stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout.buffer
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, writer


async def serve(argv: list[str], root: Path | None, add_mcp: bool, isolate: bool = False) -> None:
    proxy = Proxy(argv, Dirs.from_environment(), root, add_mcp)
    proxy.workspaces.isolate = isolate
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if main is not None:
            loop.add_signal_handler(sig, main.cancel)
    reader, writer = await _stdio()
    try:
        await proxy.run(reader, writer)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proxy.close(), 15)
    finally:
        proxy.kill_now()


def main(argv: list[str], root: Path | None, add_mcp: bool, isolate: bool = False) -> int:
    logging.basicConfig(
        level=os.environ.get("TOOLHOST_LOG", "WARNING").upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not argv:
        print(
            "toolhost acp: name the agent to run: toolhost acp -- <agent command...>",
            file=sys.stderr,
        )
        return 2
    resolved = root.resolve() if root is not None else None
    if resolved is not None and not resolved.is_dir():
        print(f"toolhost acp: --root {resolved} is not a folder", file=sys.stderr)
        return 2
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        asyncio.run(serve(argv, resolved, add_mcp, isolate))
    return 0
