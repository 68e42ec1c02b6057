"""A small JSON-RPC 2.0 endpoint over a child process's stdio (LSP base protocol framing).

Why not pygls's LanguageClient: it never drains the child's stderr (a chatty server
deadlocks once the pipe fills) and it structures answers strictly with lsprotocol (real
servers send odd or unknown fields). Here messages stay plain JSON; stderr is read
continuously into a bounded tail; every pending request fails when the child goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from lsp_server.procs.children import parent_death_hook

log = logging.getLogger(__name__)

# JSON-RPC / LSP error codes the client reacts to.
METHOD_NOT_FOUND = -32601
CONTENT_MODIFIED = -32801
SERVER_CANCELLED = -32802
SERVER_NOT_INITIALIZED = -32002

Json = Any
RequestHandler = Callable[[Json], Awaitable[Json]]
NotificationHandler = Callable[[Json], None]


class ResponseError(Exception):
    """The server answered a request with an error object."""

    def __init__(self, code: int, message: str, data: Json = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data


class ConnectionClosed(Exception):
    """The child exited (or closed its stdout) before answering."""

    def __init__(self, reason: str, stderr_tail: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.stderr_tail = stderr_tail

    def fresh(self) -> ConnectionClosed:
        """A new instance to raise (re-raising one instance keeps growing its traceback)."""
        return ConnectionClosed(self.reason, self.stderr_tail)


class StderrTail:
    """The last `limit` bytes a child wrote to stderr (it is read continuously, so the
    child never blocks on a full pipe)."""

    def __init__(self, limit: int = 64 * 1024) -> None:
        self._limit = limit
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk
        if len(self._buffer) > self._limit:
            del self._buffer[: len(self._buffer) - self._limit]

    def text(self, max_lines: int = 40) -> str:
        lines = self._buffer.decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-max_lines:])


class JsonRpcProcess:
    """A child process spoken to with JSON-RPC over its stdin/stdout."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        on_request: Callable[[str, Json], Awaitable[Json]],
        on_notification: Callable[[str, Json], None],
    ) -> None:
        self.command = list(command)
        self._cwd = cwd
        self._env = dict(env) if env is not None else None
        self._on_request = on_request
        self._on_notification = on_notification
        self.stderr = StderrTail()
        self._process: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[Json]] = {}
        self._next_id = 0
        self._write_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed: ConnectionClosed | None = None
        self.exited = asyncio.Event()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def closed(self) -> ConnectionClosed | None:
        """Why the connection ended (None while it is open)."""
        return self._closed

    @property
    def alive(self) -> bool:
        return self._process is not None and self._closed is None

    async def start(self) -> None:
        # A new session (process group) so that the server's own children (pyright's node,
        # tsserver) are killed with it: no orphans.
        self._process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self._cwd,
            env=self._env,
            start_new_session=True,
            # SIGKILL of the server must not leave the language server running.
            preexec_fn=parent_death_hook(),
        )
        self._spawn(self._read_stdout())
        self._spawn(self._read_stderr())

    def _spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- outgoing -----------------------------------------------------------------
    async def request(self, method: str, params: Json, wait_seconds: float | None = None) -> Json:
        if self._closed is not None:
            raise self._closed.fresh()
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            async with asyncio.timeout(wait_seconds):
                await self._send(
                    {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
                )
                return await future
        except (asyncio.CancelledError, TimeoutError):
            # Tell the server we gave up, so it does not keep computing a stale answer.
            if self._closed is None and not future.done():
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(1.0):
                        await self.notify("$/cancelRequest", {"id": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: the error travels as the raised exception

    async def notify(self, method: str, params: Json) -> None:
        if self._closed is not None:
            raise self._closed.fresh()
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _send(self, message: Json) -> None:
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        header = f"Content-Length: {len(body)}\r\n\r\n".encode("ascii")
        assert self._process is not None and self._process.stdin is not None
        stdin = self._process.stdin
        async with self._write_lock:
            try:
                stdin.write(header + body)
                await stdin.drain()
                return
            except (ConnectionError, RuntimeError) as exc:
                write_error = str(exc)
        # The child is gone: let the reader record its exit status and last stderr words.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.exited.wait(), 2.0)
        closed = self._closed or self._close(f"writing to the server failed: {write_error}")
        raise closed.fresh()

    # --- incoming -----------------------------------------------------------------
    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        stream = self._process.stderr
        while chunk := await stream.read(65536):
            self.stderr.feed(chunk)

    async def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stream = self._process.stdout
        reason = "the server closed its output"
        try:
            while True:
                length = await self._read_header(stream)
                if length is None:
                    break
                body = await stream.readexactly(length)
                try:
                    message = json.loads(body)
                except ValueError:
                    log.warning("%s sent invalid JSON: %.200r", self.command[0], body)
                    continue
                if isinstance(message, dict):
                    self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            reason = f"the server's output ended mid-message ({exc})"
        finally:
            code = await self._process.wait()
            # Let the stderr reader catch the last words before reporting them.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._drain_tasks()), 1.0)
            self._close(f"{reason}; exit status {describe_status(code)}")

    async def _drain_tasks(self) -> None:
        current = asyncio.current_task()
        others = [t for t in self._tasks if t is not current]
        await asyncio.gather(*others, return_exceptions=True)

    @staticmethod
    async def _read_header(stream: asyncio.StreamReader) -> int | None:
        length: int | None = None
        while True:
            line = await stream.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                if length is not None:
                    return length
                continue
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._spawn(self._answer(message["id"], method, message.get("params")))
            else:
                try:
                    self._on_notification(method, message.get("params"))
                except Exception:
                    log.exception("handling %s from %s failed", method, self.command[0])
            return
        future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
        if future is None or future.done():
            return
        error = message.get("error")
        if isinstance(error, dict):
            future.set_exception(
                ResponseError(
                    int(error.get("code", 0)), str(error.get("message", "")), error.get("data")
                )
            )
        else:
            future.set_result(message.get("result"))

    async def _answer(self, request_id: Json, method: str, params: Json) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        try:
            reply["result"] = await self._on_request(method, params)
        except ResponseError as exc:
            reply["error"] = {"code": exc.code, "message": exc.message}
        except Exception as exc:
            log.exception("answering %s failed", method)
            reply["error"] = {"code": -32603, "message": str(exc)}
        with contextlib.suppress(ConnectionClosed):
            await self._send(reply)

    def _close(self, reason: str) -> ConnectionClosed:
        """Record why the connection ended (first reason wins) and fail what waits."""
        if self._closed is None:
            self._closed = ConnectionClosed(reason, self.stderr.text())
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(self._closed.fresh())
            self.exited.set()
        return self._closed

    # --- teardown -----------------------------------------------------------------
    def kill_group(self) -> None:
        """SIGKILL the child's whole process group (synchronous: usable at interpreter exit)."""
        pid = self.pid
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)

    async def stop(self, grace: float = 2.0) -> None:
        """shutdown request, exit notification, then kill what is left of the group."""
        if self._process is None:
            return
        if self._closed is None:
            # Bounded as a whole: a hung server that no longer reads its stdin would
            # otherwise block the writes themselves.
            with contextlib.suppress(Exception):
                async with asyncio.timeout(3 * grace):
                    with contextlib.suppress(ResponseError, TimeoutError):
                        await self.request("shutdown", None, grace)
                    await self.notify("exit", None)
                    await self.exited.wait()
        self.kill_group()
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._process.wait(), 10.0)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def describe_status(code: int | None) -> str:
    if code is None:
        return "unknown"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"{code} (killed by {signal.Signals(-code).name})"
    return str(code)
