"""`toolhost mcp` before the MCP SDK is loaded: the standard library only.

Importing the SDK (pydantic models of two protocol revisions, starlette) takes longer than
the official filesystem server needs to answer `initialize`. So the front claims stdin and
stdout, builds the runtime in a thread, and answers the opening request itself (a
well-formed `initialize` of the handshake revisions, or the `server/discover` of 2026-07-28
that Claude Code opens with) with the answer the SDK gives (mcp/stdio/handshake.py;
tests/mcp/test_front.py compares them), then plain tools/list requests from the listing of
the last start, or made from the tool registry (mcp/listing_cache.py), while the SDK loads.
Everything it read is then handed to the SDK in order, the requests it answered included, so
that the SDK's session knows the client; the SDK's own answers to them are not sent again
(mcp/stdio/stdio_streams.py). Anything else (an odd opening, stdin or stdout that is not a pipe)
waits for the SDK and gets its answer, as before.

A plain `tools/call`, of either era, is not the SDK's at all: the front runs it on the warm
runtime and writes the SDK's answer itself (mcp/stdio/fast.py), so neither the SDK's import nor
its per-message work is on a call's path. The runtime is built from the start, in
a thread; the SDK is imported after it, or at once when a message needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_server.mcp.calls.tool_calls import Calls
from lsp_server.mcp.listing_cache import Listing, ListingCache
from lsp_server.mcp.stdio.fast import FastPath
from lsp_server.mcp.stdio.handshake import Opening, is_initialized, opening
from lsp_server.mcp.stdio.loader import Loader
from lsp_server.mcp.stdio.stdio_pipes import Pipes, claim_stdio

log = logging.getLogger(__name__)


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` holding .git or .toolhost.toml, else `start`."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists() or (folder / ".toolhost.toml").exists():
            return folder
    return start


async def serve(
    loader: Loader,
    root: Path,
    surface: str,
    session: str,
    attach: str,
    approvals: str | None = None,
) -> None:
    calls = Calls(root, surface, session, attach, approvals)  # type: ignore[arg-type]
    async with claim_stdio() as pipes:
        if pipes is None:
            server = await loader.module()
            await server.serve(calls)
            return
        first = await pipes.read_line()
        pipes.pending.append(first)
        message = _parsed(first)
        opened = opening(message)
        if opened is not None:
            pipes.write_message(opened.answer)
            pipes.answered.append(opened.answer["id"])
            pipes.fast = FastPath(
                calls,
                opened.version,
                opened.client_params(message),
                pipes.send_now,
                loader.start,
                loader.serializer,
                modern_meta=opened.meta,
            )
        fast = pipes.fast
        busy = _busy(fast.busy if fast else _never)
        warming = asyncio.ensure_future(_warm(calls, loader, busy))
        try:
            if opened is not None:
                listing = Listing(ListingCache.of(opened.version, surface), calls)
                await _answer_while_loading(pipes, loader, opened, listing)
            server = await loader.module()
            await server.serve_pipes(pipes, calls)
        finally:
            warming.cancel()
            if pipes.fast is not None:
                await pipes.fast.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(calls.close(), 10)


# While the imports run in threads, the loop still answers (the listing, plain calls): each
# time it wakes it waits for the importing thread to give up the GIL, after 5 ms by default.
WARMING_SWITCH_INTERVAL = 0.0005


def _never() -> bool:
    return False


def _busy(calls_running: Callable[[], bool]) -> Callable[[], bool]:
    """When the SDK's import in the background waits: while a call runs, and while the
    checkpoints place the watches a first command waits for (checkpoints/watch_start.py:
    read from the module if it was imported, so that this face imports nothing for it).
    The module may be in sys.modules half imported, by the thread that imports the
    runtime: until its body has defined `placing_watches`, no watch is being placed."""

    def busy() -> bool:
        starts = sys.modules.get("lsp_server.checkpoints.watch_start")
        placing = getattr(starts, "placing_watches", None)
        return calls_running() or bool(placing is not None and placing())

    return busy


async def _warm(calls: Calls, loader: Loader, busy: Callable[[], bool]) -> None:
    """Both imports in turn (they would share one GIL): the runtime first (tools/list and the
    first call need it), then the SDK, paced by the calls (`busy`: loader.py); meanwhile the
    loop takes the GIL back sooner."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, WARMING_SWITCH_INTERVAL))
    try:
        await calls.warm()
        loader.warm_up(busy)
        await loader.loaded()
    finally:
        sys.setswitchinterval(interval)


async def _answer_while_loading(
    pipes: Pipes, loader: Loader, opened: Opening, listing: Listing
) -> None:
    """Until the SDK is loaded: plain tools/calls run (fast.py), `notifications/initialized`
    waits for the SDK, a plain tools/list is answered (mcp/listing_cache.py); anything else
    (or the end of input) waits with the rest."""
    loading = loader.loaded()
    while not loading.done() and pipes.pending[-1]:
        reading: asyncio.Future[Any] = pipes.next_line()
        await asyncio.wait({reading, loading}, return_when=asyncio.FIRST_COMPLETED)
        if not reading.done():
            break
        line = await pipes.read_line()
        if pipes.fast is not None and line and pipes.fast.take(line):
            continue
        pipes.pending.append(line)
        message = _parsed(line)
        if is_initialized(message):
            continue
        if not opened.takes_listing(message):
            break
        try:
            result = await listing.result()
        except Exception:  # the SDK's handler builds the same registry and reports it
            log.warning("the tool listing could not be made", exc_info=True)
            break
        pipes.write_message(opened.listing_answer(message["id"], result))
        pipes.answered.append(message["id"])


def _parsed(line: bytes) -> Any:
    try:
        return json.loads(line) if line else None
    except (ValueError, RecursionError):
        return None


def main(
    root: Path | None,
    surface: str,
    session: str,
    attach: str,
    http: str | None = None,
    approvals: str | None = None,
    *,
    isolate: bool = False,
) -> int:
    loader = Loader() if http is None else None  # started by serve, after the runtime
    logging.basicConfig(
        level=os.environ.get("TOOLHOST_LOG", "WARNING").upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    resolved = (root or find_root(Path.cwd())).resolve()
    if not resolved.is_dir():
        print(f"toolhost mcp: --root {resolved} is not a folder", file=sys.stderr)
        return 2
    if isolate:
        if attach == "require":
            print(
                "toolhost mcp: --isolate runs its own runtime, not --attach require",
                file=sys.stderr,
            )
            return 2
        isolated = _isolated(resolved)
        if isolated is None:
            return 2
        resolved, attach = isolated, "never"
    # The first command's snapshot reads the root's git index first: read it beside the
    # runtime's start (seed.py; only the index parser is imported here).
    from lsp_server.checkpoints.shadow.seed import read_soon

    read_soon(resolved)
    if loader is None:  # --http: no stdio to answer early
        from lsp_server.mcp.http import http_serve

        return http_serve.main(resolved, surface, session, attach, http, approvals)  # type: ignore[arg-type]
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        asyncio.run(serve(loader, resolved, surface, session, attach, approvals))
    return 0


def _isolated(root: Path) -> Path | None:
    """The session's root in a new worktree of `root`'s live tree (said on stderr), or None
    when there can be none (said why)."""
    from lsp_server.home.dirs import Dirs
    from lsp_server.tools.session import worktree

    try:
        made = worktree.create(root, Dirs.from_environment().state)
    except (worktree.IsolationError, OSError) as exc:
        print(f"toolhost mcp --isolate: {exc}", file=sys.stderr)
        return None
    print(
        f"toolhost mcp --isolate: working in {made.root}, a git worktree of {root} with its "
        "uncommitted changes; the agent applies its change with use_capability id "
        f"workspace:apply. The worktree stays after exit; remove it with: git -C {root} "
        f"worktree remove --force {made.top}",
        file=sys.stderr,
    )
    return made.root
