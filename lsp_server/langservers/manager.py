"""The language servers of a toolhost process: one per (workspace root, server row),
started lazily, restarted once after a crash, stopped when idle and on exit.

Policy lives here (which server, when to start, restart, give up); the protocol lives in
client.py. Failures are ToolErrors with the lsp.* codes: an answer is never replaced by an
empty result.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from lsp_server.core.errors import (
    LSP_CRASHED,
    LSP_NOT_READY,
    LSP_REQUEST_FAILED,
    LSP_UNAVAILABLE,
    ToolError,
)
from lsp_server.langservers.child import LanguageServerClient, OpenDocument
from lsp_server.langservers.discovery import ResolvedServer, ServerNotFound, resolve_server
from lsp_server.langservers.jsonrpc import ConnectionClosed, ResponseError
from lsp_server.langservers.table import ServerRow, row_for_extension
from lsp_server.langservers.texts import TextCache

if TYPE_CHECKING:
    from lsp_server.config.tree import LspConfig

log = logging.getLogger(__name__)

T = TypeVar("T")
Operation = Callable[[LanguageServerClient, OpenDocument], Awaitable[T]]

# After two failed starts in a row, calls fail fast for this long before trying again.
CRASH_COOLDOWN_SECONDS = 60.0


@attrs.define
class _Slot:
    """What the manager knows about one (root, row): its client and its crash history."""

    client: LanguageServerClient | None = None
    crashes: int = 0
    last_crash: float = 0.0
    last_crash_reason: str = ""
    last_stderr: str = ""
    lock: asyncio.Lock = attrs.Factory(asyncio.Lock)


def not_ready(client: LanguageServerClient) -> ToolError:
    busy = "; ".join(client.busy) or "starting"
    return ToolError(
        LSP_NOT_READY,
        f"the language server ({client.name}) is still indexing ({busy})",
        "retry in a few seconds",
    )


class LanguageServerManager:
    def __init__(self, config: LspConfig) -> None:
        self.config = config
        self._slots: dict[tuple[Path, str], _Slot] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: dict[asyncio.Future[None], LanguageServerClient] = {}
        self.texts = TextCache()
        """Disk texts of queried and answered files (see texts.py)."""
        self.secret_verdicts: weakref.WeakKeyDictionary[Any, dict[Path, bool]] = (
            weakref.WeakKeyDictionary()
        )
        """Per workspace: is this path a secret (the tools ask for every answered file)."""
        # Children must not outlive toolhost even if the loop never runs shutdown().
        atexit.register(_kill_all_at_exit, weakref.ref(self))

    # --- discovery ----------------------------------------------------------------
    def row_for(self, path: Path) -> ServerRow:
        row = row_for_extension(path.suffix)
        if row is None:
            raise ToolError(
                LSP_UNAVAILABLE,
                f"no language server is known for {path.name!r} files",
                "use code_index or grep for this file type, or configure lsp.servers",
            )
        return row

    def resolve(self, row: ServerRow, root: Path) -> ResolvedServer:
        try:
            return resolve_server(
                row, root, self.config.servers, project_local=self.config.project_servers
            )
        except ServerNotFound as exc:
            install = "; ".join(f"{c.program}: {c.install}" for c in row.candidates)
            raise ToolError(
                LSP_UNAVAILABLE,
                exc.detail,
                f"install one ({install}) or set lsp.servers.{row.name}; `toolhost doctor` "
                "shows what is found",
            ) from exc

    # --- calls --------------------------------------------------------------------
    async def call(self, root: Path, path: Path, text: str, operation: Operation[T]) -> T:
        """Run `operation` on the server for `path` with the document synced to `text`.
        A server that died is restarted once (with backoff); a second death is lsp.crashed."""
        if self._closed:
            raise ToolError(LSP_UNAVAILABLE, "toolhost is shutting down", "retry after restart")
        row = self.row_for(path)
        language_id = row.extensions[path.suffix.lower()]
        slot = self._slots.setdefault((root, row.name), _Slot())
        while True:
            client = await self._running_client(slot, row, root)
            try:
                document = await client.sync(path, text, language_id)
                result = await operation(client, document)
            except ConnectionClosed as exc:
                await self._record_crash(slot, client, exc)
                continue
            except ResponseError as exc:
                raise ToolError(
                    LSP_REQUEST_FAILED,
                    f"{client.name} answered with an error: {exc.message} (code {exc.code})",
                    "check path, line and symbol (the symbol must be on that line), or use grep",
                ) from None
            except TimeoutError:
                raise ToolError(
                    LSP_NOT_READY,
                    f"{client.name} did not answer within "
                    f"{self.config.request_timeout_seconds:g} s",
                    "retry in a few seconds (it may still be loading the project)",
                ) from None
            slot.crashes = 0
            return result

    async def _running_client(
        self, slot: _Slot, row: ServerRow, root: Path
    ) -> LanguageServerClient:
        async with slot.lock:
            if slot.client is not None and slot.client.alive:
                return slot.client
            if slot.client is not None:
                # It died between calls (killed, crashed while idle): that is a crash too.
                closed = slot.client.process.closed or ConnectionClosed("the server exited", "")
                await self._record_crash(slot, slot.client, closed)
            while True:
                self._check_crash_budget(slot, row)
                if slot.crashes:
                    await asyncio.sleep(self.config.restart_backoff_seconds * slot.crashes)
                server = self.resolve(row, root)
                client = LanguageServerClient(server, root)
                try:
                    await client.start(self.config.start_timeout_seconds)
                except ConnectionClosed as exc:
                    await self._record_crash(slot, client, exc)
                    continue
                except TimeoutError:
                    await client.stop()
                    await self._record_crash(
                        slot,
                        client,
                        ConnectionClosed("no answer to initialize", client.process.stderr.text()),
                    )
                    continue
                except OSError as exc:
                    raise ToolError(
                        LSP_UNAVAILABLE,
                        f"could not start {server.command[0]}: {exc}",
                        "check the installation (`toolhost doctor`)",
                    ) from exc
                slot.client = client
                self._loop = asyncio.get_running_loop()
                self._start_reaper()
                log.info("started %s for %s (pid %s)", client.name, root, client.process.pid)
                return client

    async def _record_crash(
        self, slot: _Slot, client: LanguageServerClient, closed: ConnectionClosed
    ) -> None:
        """Count a client's death once (concurrent calls may all see it) and clean up."""
        if not client.crash_counted:
            client.crash_counted = True
            slot.crashes += 1
            slot.last_crash = time.monotonic()
            slot.last_crash_reason = closed.reason
            slot.last_stderr = closed.stderr_tail or client.process.stderr.text()
            log.warning("%s exited: %s", client.name, closed.reason)
        if slot.client is client:
            slot.client = None
        await client.stop()

    def _check_crash_budget(self, slot: _Slot, row: ServerRow) -> None:
        if slot.crashes < 2:
            return
        if time.monotonic() - slot.last_crash > CRASH_COOLDOWN_SECONDS:
            slot.crashes = 1  # one more attempt (with backoff) after the cool-down
            return
        tail = slot.last_stderr.strip() or "(nothing on stderr)"
        raise ToolError(
            LSP_CRASHED,
            f"the {row.name} language server crashed again after a restart "
            f"({slot.last_crash_reason}); its last stderr lines:\n{tail}",
            "fix the server's installation or project setup, or configure another server "
            f"in lsp.servers.{row.name}; toolhost tries again after "
            f"{int(CRASH_COOLDOWN_SECONDS)} s",
            details={"stderr_tail": tail},
        )

    # --- idle and shutdown ----------------------------------------------------------
    def _start_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.ensure_future(self._reap_idle())

    async def _reap_idle(self) -> None:
        period = max(1.0, min(self.config.document_idle_seconds, self.config.idle_seconds) / 4)
        while self._slots:
            await asyncio.sleep(period)
            now = time.monotonic()
            for slot in list(self._slots.values()):
                client = slot.client
                if client is None or slot.lock.locked():
                    continue
                if now - client.last_used > self.config.idle_seconds:
                    slot.client = None
                    log.info("stopping idle %s for %s", client.name, client.root)
                    # Its own task: a shutdown that cancels the reaper must not cut a stop
                    # short (shutdown waits for these and kills what is left).
                    stopping = asyncio.ensure_future(client.stop())
                    self._stopping[stopping] = client
                    stopping.add_done_callback(lambda t: self._stopping.pop(t, None))
                elif client.alive:
                    with contextlib.suppress(ConnectionClosed):
                        await client.close_idle_documents(self.config.document_idle_seconds)

    def clients(self) -> list[LanguageServerClient]:
        return [s.client for s in self._slots.values() if s.client is not None]

    def status(self) -> list[dict[str, object]]:
        return [
            {
                "language": client.server.row.name,
                "root": str(client.root),
                "command": list(client.server.command),
                "pid": client.process.pid,
                "positionEncoding": client.encoding,
                "indexing": client.busy,
                "openDocuments": len(client.documents),
            }
            for client in self.clients()
        ]

    async def shutdown(self) -> None:
        """shutdown request, exit, then kill, for every child (concurrently)."""
        self._closed = True
        if self._loop is not None and self._loop is not _running_loop():
            # Called from another event loop (a last-chance close after the server's
            # loop ended): the children's pipes belong to the old loop, so just kill.
            self.kill_all()
            return
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        clients = self.clients()
        for slot in self._slots.values():
            slot.client = None
        stopping = [*self._stopping]
        await asyncio.gather(*(c.stop() for c in clients), *stopping, return_exceptions=True)

    def kill_all(self) -> None:
        for client in [*self.clients(), *self._stopping.values()]:
            client.process.kill_group()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _kill_all_at_exit(manager_ref: weakref.ref[LanguageServerManager]) -> None:
    manager = manager_ref()
    if manager is not None:
        manager.kill_all()
