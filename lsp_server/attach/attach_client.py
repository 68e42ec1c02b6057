"""`toolhost mcp`'s side of attach: forward each call to the editor's runtime over its socket."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_server.attach import attach_records, wire

log = logging.getLogger(__name__)

ProgressCallback = Callable[[dict[str, Any]], None]
HANDSHAKE_TIMEOUT = 5.0


class AttachRefused(Exception):
    """The server at the socket did not accept this record's token."""


class EditorRuntime:
    """One attached session in the editor's runtime."""

    def __init__(
        self,
        record: attach_records.Record,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        session: str,
    ) -> None:
        self.record = record
        self.session = session
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(2)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[str, ProgressCallback] = {}
        self._reading = asyncio.create_task(self._read())
        self.lost: str | None = None

    @property
    def label(self) -> str:
        return f"the editor's toolhost (pid {self.record.pid}, {self.record.root})"

    @classmethod
    async def connect(
        cls, record: attach_records.Record, client: dict[str, str], session: str | None
    ) -> EditorRuntime:
        reader, writer = await asyncio.open_unix_connection(
            str(record.socket), limit=wire.LINE_LIMIT
        )
        try:
            params: dict[str, Any] = {"token": record.token, "client": client}
            if session:
                params["session"] = session
            writer.write(
                wire.encode({"jsonrpc": "2.0", "id": 1, "method": wire.ATTACH, "params": params})
            )
            async with asyncio.timeout(HANDSHAKE_TIMEOUT):
                await writer.drain()
                answer = await wire.read_message(reader)
        except BaseException:
            writer.close()
            raise
        result = answer.get("result") if answer else None
        if not isinstance(result, dict) or not isinstance(result.get("session"), str):
            writer.close()
            raise AttachRefused(str(answer.get("error") if answer else "connection closed"))
        return cls(record, reader, writer, result["session"])

    async def call(
        self, params: dict[str, Any], on_progress: ProgressCallback | None
    ) -> dict[str, Any]:
        """The editor's CallResult (LSP wire form); wire.ConnectionLost when it went away."""
        if self.lost is not None:
            raise wire.ConnectionLost(self.lost)
        message_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        token = f"p{message_id}"
        if on_progress is not None:
            self._progress[token] = on_progress
            params = {**params, "workDoneToken": token}
        try:
            self._writer.write(
                wire.encode(
                    {"jsonrpc": "2.0", "id": message_id, "method": wire.CALL, "params": params}
                )
            )
            return await future
        except asyncio.CancelledError:
            # The MCP client cancelled (or went away): the editor stops the call too.
            if self.lost is None:
                with contextlib.suppress(Exception):
                    cancel = {"jsonrpc": "2.0", "method": wire.CANCEL, "params": {"id": message_id}}
                    self._writer.write(wire.encode(cancel))
            raise
        finally:
            self._pending.pop(message_id, None)
            self._progress.pop(token, None)

    async def _read(self) -> None:
        reason = "the editor closed the connection"
        try:
            while True:
                message = await wire.read_message(self._reader)
                if message is None:
                    break
                self._dispatch(message)
        except (wire.ConnectionLost, ValueError, OSError) as exc:
            reason = f"the connection to the editor failed ({exc})"
        self.lost = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(wire.ConnectionLost(reason))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if message.get("method") == wire.PROGRESS:
            params = message.get("params") or {}
            callback = self._progress.get(str(params.get("token")))
            if callback is not None and isinstance(params.get("value"), dict):
                callback(params["value"])
            return
        future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
        if future is None or future.done():
            return
        if isinstance(message.get("result"), dict):
            future.set_result(message["result"])
        else:
            error = message.get("error") or {}
            future.set_exception(
                RuntimeError(f"the editor refused the call: {error.get('message')}")
            )

    async def close(self) -> None:
        self._reading.cancel()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()


async def attach(
    folder: Path, root: Path, client: dict[str, str], session: str | None
) -> EditorRuntime | None:
    """The first live editor runtime whose root contains `root`; stale records are cleaned."""
    for record in attach_records.find_records(folder, root):
        try:
            return await EditorRuntime.connect(record, client, session)
        except AttachRefused:
            log.warning(
                "the toolhost at %s refused its record's token: forgetting it", record.socket
            )
            attach_records.forget(record)
        except (OSError, TimeoutError, ValueError, wire.ConnectionLost) as exc:
            log.info("could not attach to %s: %r", record.socket, exc)
    return None


async def editor_status(
    folder: Path, root: Path
) -> tuple[attach_records.Record, dict[str, Any]] | None:
    """What the first live editor runtime for `root` says of itself (`toolhost/status` on
    its socket: no session is attached), or None when no editor's toolhost runs there."""
    for record in attach_records.find_records(folder, root):
        try:
            reader, writer = await asyncio.open_unix_connection(
                str(record.socket), limit=wire.LINE_LIMIT
            )
        except OSError:
            continue
        try:
            params = {"token": record.token}
            writer.write(
                wire.encode({"jsonrpc": "2.0", "id": 1, "method": wire.STATUS, "params": params})
            )
            async with asyncio.timeout(HANDSHAKE_TIMEOUT):
                await writer.drain()
                answer = await wire.read_message(reader)
        except (OSError, TimeoutError, ValueError, wire.ConnectionLost):
            continue
        finally:
            writer.close()
        result = answer.get("result") if answer else None
        if isinstance(result, dict):
            return record, result
    return None
