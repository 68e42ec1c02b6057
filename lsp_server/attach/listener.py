"""The editor's `toolhost serve` side of attach: a Unix socket that runs MCP agents' calls in
the editor's own runtime (its buffers, its workspace/applyEdit, its approval UI).

Each connection proves it knows the token of the 0600 discovery record, then becomes one
toolhost session named after the MCP client (`mcp:claude-code`), so approvals and the
activity view say who is asking. No MCP SDK here: `toolhost serve` must stay light.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from lsp_server import __version__
from lsp_server.attach import attach_records, wire
from lsp_server.core.client import ClientBridge, ClientFeatures
from lsp_server.protocol import TOOLHOST_APPROVE, ApproveParams
from lsp_server.runtime.progress import ProgressSender
from lsp_server.runtime.results import held_reports

if TYPE_CHECKING:
    from lsp_server.runtime.dispatch import Runtime

log = logging.getLogger(__name__)

PROGRESS_PREFIX = "attach:"


@attrs.define
class AttachedSession:
    session: str
    client: str
    client_version: str
    since: float
    calls: int = 0
    running: dict[Any, asyncio.Task[None]] = attrs.Factory(dict)

    def status(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "client": self.client,
            "clientVersion": self.client_version,
            "since": round(self.since, 3),
            "calls": self.calls,
            "running": len(self.running),
        }


class LabellingBridge:
    """The editor's bridge, with approvals for an attached session titled by the MCP client
    that asks ("claude-code (MCP): Edit notes.md")."""

    def __init__(self, inner: ClientBridge, labels: dict[str, str]) -> None:
        self._inner = inner
        self._labels = labels

    @property
    def features(self) -> ClientFeatures:
        return self._inner.features

    def notify(self, method: str, params: Any) -> None:
        self._inner.notify(method, params)

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        if method == TOOLHOST_APPROVE and isinstance(params, ApproveParams):
            label = self._labels.get(params.session)
            if label is not None:
                params = attrs.evolve(params, title=f"{label}: {params.title}", client=label)
        return await self._inner.request(method, params, timeout)

    def show_message(self, text: str, level: str = "warning") -> None:
        self._inner.show_message(text, level)


class AttachListener:
    """Made before the runtime (its bridge and progress router go into the EditorLink), bound
    to it once built, started when the editor is initialized."""

    def __init__(
        self,
        folder: Path,
        ready: Callable[[], Awaitable[None]],
        status: Callable[[], dict[str, Any]] = dict,
    ) -> None:
        self.folder = folder
        self.ready = ready
        self.describe = status
        """What `toolhost/status` on the socket answers (toolhost doctor asks it)."""
        self.runtime: Runtime | None = None
        self.record: attach_records.Record | None = None
        self.sessions: dict[str, AttachedSession] = {}
        self.labels: dict[str, str] = {}
        self._server: asyncio.AbstractServer | None = None
        self._writers: dict[str, asyncio.StreamWriter] = {}
        self._ids = itertools.count(1)

    # -- life ---------------------------------------------------------------------------

    def bridge(self, editor: ClientBridge) -> LabellingBridge:
        return LabellingBridge(editor, self.labels)

    def bind(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def start(self) -> attach_records.Record:
        assert self.runtime is not None, "bind the runtime first"
        root = self.runtime.workspace.roots[0]
        record = attach_records.new_record(self.folder, root, __version__)
        with contextlib.suppress(FileNotFoundError):
            record.socket.unlink()
        # No umask around the bind: it is process-wide, and a command's state folder made
        # meanwhile in another thread lost its search bit. The records folder is private
        # (0700, ours), so nobody else reaches the socket between bind and chmod.
        self._server = await asyncio.start_unix_server(
            self._serve, path=str(record.socket), limit=wire.LINE_LIMIT
        )
        record.socket.chmod(0o600)
        attach_records.write_record(record)
        self.record = record
        log.info("attach: listening on %s for %s", record.socket, root)
        return record

    async def close(self) -> None:
        self.remove_now()
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers.values()):
                writer.close()
            self._server = None

    def remove_now(self) -> None:
        """Synchronous: also run from signal handlers and at exit."""
        if self.record is not None:
            attach_records.remove_record(self.record)

    def status(self) -> list[dict[str, Any]]:
        return [session.status() for session in self.sessions.values()]

    def progress_router(self, editor: ProgressSender) -> ProgressSender:
        """Progress of an attached call goes back over its socket, the rest to the editor."""

        def route(token: str | int, value: dict[str, Any]) -> None:
            if isinstance(token, str) and token.startswith(PROGRESS_PREFIX):
                connection, _, original = token[len(PROGRESS_PREFIX) :].partition(":")
                writer = self._writers.get(connection)
                if writer is not None and not writer.is_closing():
                    params = {"token": original, "value": value}
                    writer.write(
                        wire.encode({"jsonrpc": "2.0", "method": wire.PROGRESS, "params": params})
                    )
            else:
                editor(token, value)

        return route

    # -- one connection -----------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = str(next(self._ids))
        attached: AttachedSession | None = None
        try:
            attached = await self._handshake(reader, writer)
            if attached is None:
                return
            self._writers[connection] = writer
            await self._read_calls(reader, writer, attached, connection)
        except (wire.ConnectionLost, ConnectionError):
            pass
        except Exception:
            log.exception("attach connection failed")
        finally:
            self._writers.pop(connection, None)
            if attached is not None:
                # The MCP client is gone: its running calls stop (a shell call's group too).
                for task in attached.running.values():
                    task.cancel()
                self.sessions.pop(attached.session, None)
                self.labels.pop(attached.session, None)
            writer.close()

    async def _handshake(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> AttachedSession | None:
        try:
            async with asyncio.timeout(10):
                first = await wire.read_message(reader)
        except (TimeoutError, ValueError):
            return None
        if first is None:
            return None
        params = first.get("params")
        params = params if isinstance(params, dict) else {}
        token = params.get("token")
        expected = self.record.token if self.record else ""
        if first.get("method") not in (wire.ATTACH, wire.STATUS) or not (
            isinstance(token, str) and secrets.compare_digest(token, expected)
        ):
            writer.write(
                wire.encode(
                    wire.error(
                        first.get("id"), wire.WRONG_TOKEN, "toolhost: wrong or missing attach token"
                    )
                )
            )
            await writer.drain()
            return None
        if first.get("method") == wire.STATUS:
            answer = {"jsonrpc": "2.0", "id": first.get("id"), "result": self.describe()}
            writer.write(wire.encode(answer))
            await writer.drain()
            return None
        raw_client = params.get("client")
        client: dict[str, Any] = raw_client if isinstance(raw_client, dict) else {}
        name = _label(client.get("name"), "mcp-client")
        requested = params.get("session")
        base = f"mcp:{name}" + (
            f"/{_label(requested, '')}" if isinstance(requested, str) and requested else ""
        )
        session = base
        for number in itertools.count(2):
            if session not in self.sessions:
                break
            session = f"{base}#{number}"
        attached = AttachedSession(session, name, _label(client.get("version"), ""), time.time())
        self.sessions[session] = attached
        self.labels[session] = f"{name} (MCP)"
        root = self.runtime.workspace.roots[0] if self.runtime else Path()
        result = {"session": session, "root": str(root), "pid": os.getpid(), "version": __version__}
        writer.write(wire.encode({"jsonrpc": "2.0", "id": first.get("id"), "result": result}))
        await writer.drain()
        return attached

    async def _read_calls(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        attached: AttachedSession,
        connection: str,
    ) -> None:
        while True:
            try:
                message = await wire.read_message(reader)
            except ValueError:
                writer.write(
                    wire.encode(wire.error(None, wire.INVALID_REQUEST, "not a JSON-RPC message"))
                )
                continue
            if message is None:
                return
            method = message.get("method")
            if method == wire.CANCEL:
                params = message.get("params")
                task = attached.running.get(params.get("id") if isinstance(params, dict) else None)
                if task is not None:
                    task.cancel()
            elif method == wire.CALL and "id" in message:
                task = asyncio.create_task(self._call(message, writer, attached, connection))
                attached.running[message["id"]] = task
            elif "id" in message:
                writer.write(
                    wire.encode(
                        wire.error(
                            message["id"], wire.METHOD_NOT_FOUND, f"unknown method {method!r}"
                        )
                    )
                )

    async def _call(
        self,
        message: dict[str, Any],
        writer: asyncio.StreamWriter,
        attached: AttachedSession,
        connection: str,
    ) -> None:
        # The call's audit line and didCall go out once its answer is written, not before.
        with held_reports.held():
            await self._answer(message, writer, attached, connection)

    async def _answer(
        self,
        message: dict[str, Any],
        writer: asyncio.StreamWriter,
        attached: AttachedSession,
        connection: str,
    ) -> None:
        message_id = message["id"]
        try:
            params = wire.call_params(message.get("params"))
            params.session = attached.session
            if params.work_done_token is not None:
                params.work_done_token = f"{PROGRESS_PREFIX}{connection}:{params.work_done_token}"
            attached.calls += 1
            await self.ready()
            assert self.runtime is not None
            self.runtime.sessions.get(attached.session, attached.client)  # the agent: the client
            result = await self.runtime.call(params)
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": message_id,
                "result": wire.converter().unstructure(result),
            }
        except asyncio.CancelledError:
            return
        except Exception as exc:  # unreadable params: an answer, never a dead connection
            log.info("attach: refused a call: %r", exc)
            reply = wire.error(
                message_id, wire.INVALID_REQUEST, f"toolhost/call params not readable: {exc}"
            )
        finally:
            attached.running.pop(message_id, None)
        if not writer.is_closing():
            writer.write(wire.encode_answer(reply))


def _label(value: Any, default: str) -> str:
    """A client-chosen name, made safe to show: printable, short, no separators we use."""
    if not isinstance(value, str):
        return default
    cleaned = "".join(ch for ch in value if ch.isprintable() and ch not in "/#:")[:60].strip()
    return cleaned or default
