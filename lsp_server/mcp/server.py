"""`toolhost mcp`: the tool runtime over the Model Context Protocol (stdio), on the official
SDK's low-level server. Both revisions the SDK serves: 2025-11-25 (initialize) and
2026-07-28. Imported only by `toolhost mcp`, in the front's thread (mcp/stdio/front.py): the SDK
costs more than a second to import.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from lsp_server import __version__
from lsp_server.core.client import UnreadableAnswer
from lsp_server.mcp.calls import call_path
from lsp_server.mcp.calls.call_path import ToolCall, UnknownTool
from lsp_server.mcp.calls.input_required import UnknownRequestState
from lsp_server.mcp.calls.progress_relay import Deliver
from lsp_server.mcp.calls.tool_calls import Calls
from lsp_server.mcp.calls.unreadable import form_answer
from lsp_server.mcp.listing_cache import tool_listing
from lsp_server.mcp.sdk_json import writable
from lsp_server.mcp.server_info import INSTRUCTIONS, SERVER_NAME
from lsp_server.runtime.context import Elicit

if TYPE_CHECKING:
    from lsp_server.core.contract import Registry, Surface
    from lsp_server.mcp.calls.local import Approvals
    from lsp_server.mcp.calls.router import AttachMode, CallRouter

log = logging.getLogger(__name__)


def _client_info(ctx: ServerRequestContext[Any, Any]) -> dict[str, str]:
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None:
        return {"name": "mcp-client", "version": ""}
    return {"name": info.name, "version": info.version or ""}


def _connection(ctx: ServerRequestContext[Any, Any]) -> str:
    """Over Streamable HTTP, each MCP session (`Mcp-Session-Id`) is a toolhost session of its
    own: what one client read does not let another write. Stdio has one connection."""
    headers = getattr(ctx.request, "headers", None)
    session_id = headers.get("mcp-session-id") if headers is not None else None
    return f"mcp-{session_id[:16]}" if isinstance(session_id, str) and session_id else ""


def _form_mode(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The client declared form elicitation (URL mode alone has no form for the diff)."""
    capabilities = ctx.session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else None
    return declared is not None and not (declared.url is not None and declared.form is None)


def _elicit_for(ctx: ServerRequestContext[Any, Any]) -> Elicit | None:
    """The client's form elicitation as a request, where this revision allows one."""
    if not _form_mode(ctx) or not ctx.session.can_send_request:
        return None
    return session_elicit(ctx.session, ctx.request_id)


def session_elicit(session: Any, request_id: Any) -> Elicit:
    """Form elicitation through the SDK's session (`request_id`: the call it is for, or None
    for the connection's own channel, as the front's calls use it: mcp/stdio/fast.py)."""

    async def elicit(message: str, schema: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        try:
            answer = await session.elicit_form(message, schema, related_request_id=request_id)
        except MCPError as exc:
            if isinstance(exc.data, UnreadableAnswer):  # made by AnswerStream
                raise exc.data from None
            raise
        except ValidationError as exc:  # a result object, but not an ElicitResult
            raise form_answer(exc) from None
        return answer.action, dict(answer.content) if answer.content else None

    return elicit


class Backend:
    """The tool listing (made on first use) and the calls (calls/tool_calls.py): the `initialize`
    answer waits only for the SDK, not for the tools (their imports cost as much again)."""

    def __init__(
        self,
        root: Path,
        surface: Surface,
        session: str,
        attach: AttachMode,
        approvals: Approvals | None = None,
        calls: Calls | None = None,
    ) -> None:
        self.calls = calls or Calls(root, surface, session, attach, approvals)
        self.surface = surface
        self._listing: types.ListToolsResult | None = None

    def registry(self) -> Registry:
        return self.calls.registry()

    def listing(self) -> types.ListToolsResult:
        if self._listing is None:  # fixed for the whole session from here on
            tools = tool_listing(self.registry(), self.surface)
            self._listing = types.ListToolsResult(
                tools=[types.Tool.model_validate(t) for t in tools]
            )
        return self._listing

    def router(self) -> CallRouter:
        return self.calls.router()

    async def warm(self, calls_too: bool = True) -> None:
        """Ready in the background what the first tools/list and tools/call need: the tool
        listing, then (unless the front warms them already) the calls (mcp/calls/tool_calls.py)."""
        try:
            await asyncio.to_thread(self.listing)
        except Exception:
            log.debug("warming up failed; the first call builds what it needs", exc_info=True)
        if calls_too:
            await self.calls.warm()

    async def close(self) -> None:
        await self.calls.close()


def _complete(result: dict[str, Any]) -> types.CallToolResult:
    # resultType is required from 2026-07-28 on; earlier revisions' sieve drops it.
    result.setdefault("resultType", "complete")
    # pydantic cannot write a lone surrogate (a root or file name that is not UTF-8): over
    # HTTP the answer was an empty event stream.
    result = writable(result)
    # The runner accepts a plain dict (HandlerResult) and validates it once itself; building
    # the model here would validate and dump it a second time (and an input_required answer
    # is not a CallToolResult).
    return cast("types.CallToolResult", result)


def _progress_of(ctx: ServerRequestContext[Any, Any]) -> Deliver | None:
    """Where this request's progress goes: its session's notifications/progress, if the
    request came with a progress token."""
    meta = ctx.meta or {}
    if meta.get("progress_token", meta.get("progressToken")) is None:
        return None

    async def deliver(count: int, message: str | None) -> None:
        await ctx.session.report_progress(count, None, message)

    return deliver


def build_server(
    backend: Backend, session_ready: Callable[[Elicit], None] | None = None
) -> Server[Any]:
    """`session_ready`: given the SDK's session's form elicitation once it has the connection
    (the front's calls send their approval forms through it: mcp/stdio/fast.py)."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return backend.listing()

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        calls = backend.calls
        progress = _progress_of(ctx)
        request = ToolCall(
            params.name, params.arguments, _client_info(ctx), _connection(ctx), progress
        )
        try:
            if params.request_state is not None:  # 2026-07-28: the answer to an approval form
                responses = params.input_responses or {}
                result = await call_path.resume(calls, params.request_state, responses, progress)
            elif _form_mode(ctx) and not ctx.session.can_send_request:
                # 2026-07-28: no server-to-client requests; forms go back as input_required.
                result = await call_path.call_in_rounds(calls, request)
            else:
                result = await call_path.call(calls, request, _elicit_for(ctx))
        except UnknownRequestState:
            raise MCPError(INVALID_PARAMS, "toolhost: no call waits on this requestState") from None
        except UnknownTool as unknown:
            raise MCPError(**unknown.error) from None
        return _complete(result)

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # No OpenTelemetry exporter is ever installed here: skip its span per message.
    server.middleware = [params_named]
    if session_ready is not None:

        async def hand_session(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
            session_ready(session_elicit(ctx.session, None))
            return await call_next(ctx)

        server.middleware = [params_named, hand_session]
    return server


async def params_named(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
    """The SDK answers params that do not fit a method with a bare "Invalid request
    parameters" (it keeps pydantic's text off the wire); a client author needs to know
    which field: `tools/call: invalid params: params.name: Input should be a valid string
    (got the number 5)`. The same code, -32602."""
    try:
        return await call_next(ctx)
    except ValidationError as exc:
        problems = "; ".join(_problem(error) for error in exc.errors()[:MAX_PARAM_PROBLEMS])
        message = f"{ctx.method}: invalid params: {problems}"
        raise MCPError(code=INVALID_PARAMS, message=message) from None


MAX_PARAM_PROBLEMS = 4


def _problem(error: ErrorDetails) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "params"
    if not where.startswith("params"):
        where = f"params.{where}"
    if error["type"] == "missing":
        return f"{where}: required"
    text = error["msg"].replace("a valid dictionary", "an object")
    return f"{where}: {text} (got {_json_kind(error.get('input'))})"


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}" if len(value) <= 40 else "a long string"
    return {dict: "an object", list: "an array", type(None): "null"}.get(type(value), "a value")
