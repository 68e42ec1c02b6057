"""A plain `tools/call` answered by the front itself: the warm runtime runs it, and the answer
is the bytes the SDK would have written, without the SDK (its import, and its pydantic
validation and dumps per message, cost more than the call: docs/BENCHMARKS.md).

Plain: a request on a connection the front opened (mcp/stdio/handshake.py), params of `name`,
`arguments` and `_meta`: on a handshake revision any `_meta` (its progress token gets the
SDK's notifications/progress), on 2026-07-28 one that repeats the connection's opening, with
the client's own keys beside it (openings.repeats_opening: Claude Code's calls). Anything
else (tasks, 2026-07-28's request state, odd params) goes to the SDK as before. A call that
needs an approval form sends it through the SDK's session (`elicitation/create` and its
answer are the SDK's) on a handshake revision; on 2026-07-28 it answers `input_required`
from the connection's round trips, which the SDK's handler resumes (calls/input_required.py).
The call itself goes the path the SDK's handler's calls go (mcp/calls/call_path.py).
`notifications/cancelled` for a call run here cancels it, and it is not answered, as the SDK
does. tests/mcp/test_fast.py compares this path's answers with the SDK's for the same calls.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lsp_server.mcp.calls import call_path
from lsp_server.mcp.calls.call_path import ToolCall, UnknownTool
from lsp_server.mcp.calls.progress_relay import Deliver
from lsp_server.mcp.sdk_json import encode
from lsp_server.mcp.stdio.handshake import plain_id, repeats_opening, stamped

if TYPE_CHECKING:
    from lsp_server.mcp.calls.tool_calls import Calls
    from lsp_server.runtime.context import Elicit

log = logging.getLogger(__name__)

CONNECTION_CLOSED = -32000  # mcp_types.CONNECTION_CLOSED
_PARAMS = {"name", "arguments", "_meta"}

# (version, result) -> the SDK's wire form of a tools/call result (serialize_server_result).
Serializer = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def plain_call(message: Any) -> tuple[Any, str, Any, dict[str, Any]] | None:
    """(id, name, arguments, _meta) of a tools/call this path answers, else None."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    if not set(message) <= {"jsonrpc", "id", "method", "params"}:
        return None
    message_id, params = message.get("id"), message.get("params")
    if message.get("jsonrpc") != "2.0" or not plain_id(message_id):
        return None
    if not isinstance(params, dict) or not set(params) <= _PARAMS:
        return None
    name, arguments, meta = params.get("name"), params.get("arguments"), params.get("_meta")
    if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
        return None
    if meta is None and "_meta" in params:
        return None
    meta = {} if meta is None else meta
    if not isinstance(meta, dict) or "progress_token" in meta:
        return None
    if "progressToken" in meta and not plain_id(meta["progressToken"]):
        return None
    return message_id, name, arguments, meta


def _id_key(value: Any) -> Any:
    """The SDK's correlation key (coerce_request_id): "7" and 7 are one id."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


def form_mode(capabilities: Any) -> bool:
    """The client declared form elicitation (as server._form_mode reads the parsed model)."""
    declared = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if not isinstance(declared, dict):
        return False
    return not (declared.get("url") is not None and declared.get("form") is None)


def wire_result(result: dict[str, Any], modern: bool = False) -> dict[str, Any] | None:
    """The SDK's wire form of a tools/call result toolhost makes (results.py: text and image
    content, isError, structuredContent, _meta), keys in the order the SDK's model dumps them
    (`modern`: 2026-07-28's, with its resultType, before the serverInfo stamp); None for any
    other shape (the SDK's serializer then makes it)."""
    if not set(result) <= {"content", "isError", "structuredContent", "_meta", "resultType"}:
        return None
    meta, content = result.get("_meta"), result.get("content")
    is_error, structured = result.get("isError"), result.get("structuredContent")
    if not isinstance(content, list) or not isinstance(is_error, bool):
        return None
    if not all(isinstance(v, dict | None) for v in (meta, structured)):
        return None
    items: list[dict[str, Any]] = []
    for item in content:
        if not isinstance(item, dict):
            return None
        if item.get("type") == "text" and set(item) == {"type", "text"}:
            if not isinstance(item["text"], str):
                return None
            items.append({"text": item["text"], "type": "text"})
        elif item.get("type") == "image" and set(item) == {"type", "data", "mimeType"}:
            if not (isinstance(item["data"], str) and isinstance(item["mimeType"], str)):
                return None
            items.append({"data": item["data"], "mimeType": item["mimeType"], "type": "image"})
        else:
            return None
    wire: dict[str, Any] = {}
    if meta is not None:
        wire["_meta"] = meta
    wire["content"] = items
    wire["isError"] = is_error
    if modern:
        wire["resultType"] = "complete"
    if structured is not None:
        wire["structuredContent"] = structured
    return wire


def input_required_wire(result: dict[str, Any]) -> dict[str, Any] | None:
    """2026-07-28's `input_required` answer (mcp/calls/input_required.py: approval forms) in
    the SDK's wire form, keys in the order its models dump them; None for any other shape."""
    requests, state = result.get("inputRequests"), result.get("requestState")
    if set(result) != {"resultType", "inputRequests", "requestState"}:
        return None
    if result["resultType"] != "input_required" or not isinstance(state, str):
        return None
    if not isinstance(requests, dict):
        return None
    wire: dict[str, Any] = {}
    for key, request in requests.items():
        params = request.get("params") if isinstance(request, dict) else None
        if not isinstance(params, dict) or set(request) != {"method", "params"}:
            return None
        schema = params.get("requestedSchema")
        if request["method"] != "elicitation/create" or params.get("mode") != "form":
            return None
        if set(params) != {"mode", "message", "requestedSchema"}:
            return None
        if not isinstance(params["message"], str) or not isinstance(schema, dict):
            return None
        if set(schema) != {"type", "properties", "required"} or schema["type"] != "object":
            return None
        form = {"properties": schema["properties"], "required": schema["required"]}
        wire[key] = {
            "method": "elicitation/create",
            "params": {
                "message": params["message"],
                "mode": "form",
                "requestedSchema": {**form, "type": "object"},
            },
        }
    return {"inputRequests": wire, "requestState": state, "resultType": "input_required"}


class FastPath:
    """The front's tools/call handler for one stdio connection."""

    def __init__(
        self,
        calls: Calls,
        version: str,
        client_params: dict[str, Any],
        send: Callable[[bytes], Awaitable[None]],
        need_sdk: Callable[[], None],
        serializer: Callable[[], Awaitable[Serializer]],
        *,
        modern_meta: dict[str, Any] | None = None,
    ) -> None:
        info = client_params.get("clientInfo") or {}
        self.calls = calls
        self.version = version
        self.modern_meta = modern_meta
        """2026-07-28: the `_meta` the connection opened with, which each call repeats."""
        self.client = {"name": str(info.get("name")), "version": str(info.get("version") or "")}
        self.form_mode = form_mode(client_params.get("capabilities"))
        self._send = send
        self._need_sdk = need_sdk
        self._serializer = serializer
        self._running: dict[Any, tuple[Any, asyncio.Task[None]]] = {}
        """The calls running here by the SDK's correlation key: (their id, their task)."""
        self._sdk_elicit: asyncio.Future[Elicit] = asyncio.get_running_loop().create_future()
        self._closing = False
        self._unstarted: set[asyncio.Task[None]] = set()  # cancelled now: no answer of its own

    def take(self, line: bytes) -> bool:
        """Whether this line is a call this path now runs (or a cancellation of one)."""
        if b'"tools/call"' not in line and b"notifications/cancelled" not in line:
            return False  # the common other messages, without parsing them twice
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # the SDK's to drop, as before
            return False
        if self._cancel(message):
            return True
        call = plain_call(message)
        if call is None or (
            self.modern_meta is not None and not repeats_opening(call[3], self.modern_meta)
        ):
            return False
        key = _id_key(call[0])
        if key in self._running:  # a duplicate id: the SDK's (its answer is its own)
            return False
        task = asyncio.create_task(self._run(*call))
        self._running[key] = (call[0], task)
        self._unstarted.add(task)
        task.add_done_callback(lambda _: self._forget(key, task))
        return True

    def busy(self) -> bool:
        """Whether a call runs here (read from the SDK's importing thread: loader.py)."""
        return bool(self._running)

    def _forget(self, key: Any, task: asyncio.Task[None]) -> None:
        """The call is no longer running: its id may be used again (it is answered)."""
        self._unstarted.discard(task)
        running = self._running.get(key)
        if running is not None and running[1] is task:
            del self._running[key]

    def _cancel(self, message: Any) -> bool:
        if not isinstance(message, dict) or message.get("method") != "notifications/cancelled":
            return False
        params = message.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        running = self._running.get(_id_key(request_id)) if plain_id(request_id) else None
        if running is None:
            return False
        running[1].cancel()  # never answered, as the SDK does for a cancelled request
        return True

    def elicitation_ready(self, elicit: Elicit) -> None:
        """The SDK's session can send forms now (server.py, once it has the connection)."""
        if not self._sdk_elicit.done():
            self._sdk_elicit.set_result(elicit)

    async def _elicit(self, message: str, schema: dict[str, Any]) -> tuple[str, Any]:
        self._need_sdk()
        elicit = await self._sdk_elicit
        return await elicit(message, schema)

    async def _run(self, message_id: Any, name: str, arguments: Any, meta: Any) -> None:
        self._unstarted.discard(asyncio.current_task())
        token = meta.get("progressToken")
        progress = _progress_notifier(token, self._send) if token is not None else None
        request = ToolCall(name, arguments, self.client, "", progress)
        task = asyncio.current_task()

        async def answer_early(asked: dict[str, Any]) -> None:  # 2026-07-28: a form
            await self._reply(message_id, {"result": await self._wire(asked)}, task)

        from lsp_server.runtime.results import held_reports

        # The call's audit line and didCall go out once its answer is written, not before.
        with held_reports.held():
            try:
                await asyncio.shield(self.calls.ready())  # started here if the SDK went first
                if self.modern_meta is not None and self.form_mode:
                    # 2026-07-28: forms as input_required
                    result = await call_path.call_in_rounds_here(self.calls, request, answer_early)
                    if result is None:
                        return  # answered input_required: the call's result is for the retry
                else:  # a handshake revision's forms go through the SDK's session
                    elicit = self._elicit if self.form_mode else None
                    result = await call_path.call(self.calls, request, elicit)
                answer = {"result": await self._wire(result)}
            except UnknownTool as unknown:
                answer = {"error": unknown.error}
            except asyncio.CancelledError:
                if self._closing:  # the client closed its end: answered if it still reads
                    await self._reply_closed(message_id, task)
                raise
            except Exception as exc:  # the SDK's boundary: code 0 and the text, logged
                log.exception("handler for 'tools/call' raised")
                answer = {"error": _internal(exc)}
            await self._reply(message_id, answer, task)

    async def _reply(
        self, message_id: Any, answer: dict[str, Any], task: asyncio.Task[Any] | None
    ) -> None:
        """Answers the request `task` runs: the id may be used again, and a cancellation of it
        is no longer this path's (a call that asked goes on for the client's retry)."""
        try:
            data = self._encode({"jsonrpc": "2.0", "id": message_id, **answer})
        except Exception as exc:  # not JSON (a lone surrogate): an answer all the same
            log.exception("the answer to tools/call %r cannot be encoded", message_id)
            data = self._encode({"jsonrpc": "2.0", "id": message_id, "error": _internal(exc)})
        if task is not None:
            self._forget(_id_key(message_id), task)  # a client may reuse the id once answered
        await self._send(data)

    async def _wire(self, result: dict[str, Any]) -> dict[str, Any]:
        modern = self.modern_meta is not None
        complete = result.get("resultType", "complete") == "complete"
        wire = wire_result(result, modern) if complete else None
        if wire is None and modern and not complete:
            wire = input_required_wire(result)
        if wire is None:
            self._need_sdk()
            serialize = await self._serializer()
            wire = await serialize(self.version, {"resultType": "complete", **result})
        return stamped(wire) if modern else wire

    def _encode(self, message: dict[str, Any]) -> bytes:
        return encode(message) + b"\n"

    async def close(self) -> None:
        """Cancel the calls still running (shell groups killed); each is answered once, with
        its "cancelled" result or else the SDK's "Connection closed", if the output is open."""
        self._closing = True
        running = list(self._running.values())
        unstarted = [(message_id, task) for message_id, task in running if task in self._unstarted]
        for _, task in running:
            task.cancel()
        if running:
            await asyncio.wait([task for _, task in running])
        for message_id, _ in unstarted:  # cancelled before their first step: never answered
            await self._reply_closed(message_id, None)

    async def _reply_closed(self, message_id: Any, task: asyncio.Task[Any] | None) -> None:
        try:
            error = {"code": CONNECTION_CLOSED, "message": "Connection closed"}
            await self._reply(message_id, {"error": error}, task)
        except Exception:  # the client is gone
            log.debug("no Connection closed answer for %r", message_id, exc_info=True)


def _progress_notifier(token: Any, send: Callable[[bytes], Awaitable[None]]) -> Deliver:
    """One request's notifications/progress as the SDK writes them (as server.py's relay)."""

    async def deliver(count: int, message: str | None) -> None:
        params: dict[str, Any] = {"progressToken": token, "progress": count}
        if message:
            params["message"] = message
        notification = {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
        await send(encode(notification) + b"\n")

    return deliver


def _internal(exc: Exception) -> dict[str, Any]:
    """The SDK's error for a handler that raised (its JSONRPCDispatcher pins code 0)."""
    return {"code": 0, "message": str(exc)}
