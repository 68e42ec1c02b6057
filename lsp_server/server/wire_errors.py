"""JSON-RPC errors the server sends itself: each with a code a client can act on and a
message a person can read; never a Python traceback or an exception's repr."""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

import cattrs
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcServerNotInitialized

from lsp_server.runtime.core.errors import ToolError

if TYPE_CHECKING:
    from lsp_server.protocol import CallParams, ResultPage, ResultParams
    from lsp_server.runtime.dispatch import Runtime

log = logging.getLogger(__name__)

INTERNAL_ERROR = -32603


def safe(error: ResponseError | None) -> ResponseError | None:
    """pygls answers a handler's exception with -32603 carrying the exception (and at times
    its traceback): log that, send an incident id instead."""
    if error is None or error.code != INTERNAL_ERROR:
        return error
    incident = uuid.uuid4().hex[:8]
    log.error(
        "internal error %s answered to the client: %s %s", incident, error.message, error.data
    )
    return ResponseError(
        code=INTERNAL_ERROR,
        message=f"internal_error: toolhost hit a bug (incident {incident}); the server keeps "
        "running; report the incident id from the log",
    )


def not_initialized() -> JsonRpcServerNotInitialized:
    return JsonRpcServerNotInitialized(
        message="server.not_initialized: the server is not initialized; send initialize first"
    )


def command_params(converter: cattrs.Converter, args: tuple[Any, ...]) -> CallParams:
    """workspace/executeCommand toolhost.call: the one argument is toolhost/call's params."""
    if len(args) != 1 or not isinstance(args[0], dict):
        raise JsonRpcInvalidParams(
            message="toolhost.call takes one argument: the params object of toolhost/call"
        )
    try:
        from lsp_server.protocol import CallParams  # loaded with the runtime

        params: CallParams = converter.structure(args[0], CallParams)
    except (cattrs.BaseValidationError, ValueError, TypeError) as exc:
        raise JsonRpcInvalidParams(
            message=f"toolhost.call: the params object is malformed ({exc})"
        ) from None
    return params


def result_page(runtime: Runtime, params: ResultParams) -> ResultPage:
    """A page of a stored result, wherever its session is (refs are unique per server)."""
    session = runtime.sessions.holding(params.result_ref)
    if session is None and params.session is not None:
        session = runtime.sessions.get(params.session)
    try:
        if session is None:
            raise ToolError(
                "result.not_found",
                f"no stored result {params.result_ref!r} (evicted or never stored)",
                "re-run the call that produced it",
            )
        return session.results.page(params.result_ref, params.offset, params.limit)
    except ToolError as exc:
        raise JsonRpcInvalidParams(message=exc.message) from None
