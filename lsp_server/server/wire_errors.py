"""JSON-RPC errors the server sends itself: each with a code a client can act on and a
message a person can read; never a Python traceback or an exception's repr."""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any, TypeGuard

import attrs
import cattrs
from lsprotocol.types import ResponseError
from pygls.exceptions import (
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)

from lsp_server.core.errors import ToolError
from lsp_server.wire import method_names

if TYPE_CHECKING:
    from lsp_server.protocol import CallParams, ResultPage, ResultParams
    from lsp_server.runtime.dispatch import Runtime

log = logging.getLogger(__name__)

INTERNAL_ERROR = -32603
PROBLEMS_SHOWN = 3
"""An invalid-params message names this many fields, then `and N more`."""


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


def usable_id(msg_id: Any) -> TypeGuard[int | str]:
    """A request id as LSP takes it: an integer or a string (not 1.5, true, null or {})."""
    return isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool))


def invalid_request(data: dict[str, Any]) -> JsonRpcInvalidRequest | None:
    """-32600 for a request or notification that cannot be one: its id is not an integer
    or a string (answered to id null, as JSON-RPC 2.0 says), its method not a string."""
    msg_id, method = data.get("id", 0), data["method"]
    if data.get("jsonrpc") == "2.0" and usable_id(msg_id) and isinstance(method, str):
        return None
    from lsp_server.protocol.wire_types import shown  # loads the message types: not before

    if data.get("jsonrpc") != "2.0":
        problem = 'a request must carry "jsonrpc": "2.0"'
    elif not usable_id(msg_id):
        problem = (
            f"the id must be an integer or a string, not {shown(msg_id)} (answered to id null)"
        )
    else:
        problem = f"the method must be a string, not {shown(method)}"
    return JsonRpcInvalidRequest(f"invalid request: {problem}")


def params_refusal(
    method: str, data: dict[str, Any], message_type: Any, exc: BaseException
) -> JsonRpcInvalidParams:
    """-32602 for a request or notification whose params do not fit its method (`exc`:
    cattrs' error for the whole message `data`)."""
    from lsp_server.protocol.wire_types import misfits

    fields = attrs.fields_dict(message_type) if attrs.has(message_type) else {}
    params_type: Any = fields["params"].type if "params" in fields else None
    return invalid_params(method, misfits(exc, data, ""), params_type)


def invalid_params(label: str, problems: list[str], params_type: Any) -> JsonRpcInvalidParams:
    """-32602 naming what does not fit, field by field (`required field missing @
    params.name`; the first few, then how many more), and for a method toolhost owns the
    shape its params take."""
    from lsp_server.protocol.wire_types import shape

    owned = label.startswith((method_names.PREFIX, "toolhost.")) and attrs.has(params_type)
    hint = f" (expected: {shape(params_type)})" if owned else ""
    return JsonRpcInvalidParams(
        message=one_line(f"{label}: invalid params: {summed_up(problems)}{hint}")
    )


def summed_up(problems: list[str], shown: int = PROBLEMS_SHOWN) -> str:
    """The first `shown` problems, then how many more: a message stays short."""
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more


def one_line(text: str, limit: int = 600) -> str:
    """For the wire and the log: one line, lone surrogates escaped (a log handler cannot
    write one), at most `limit` characters."""
    text = " ".join(text.encode("utf-8", "backslashreplace").decode("utf-8").splitlines())
    return text if len(text) <= limit else text[:limit] + "..."


def command_params(converter: cattrs.Converter, args: tuple[Any, ...]) -> CallParams:
    """workspace/executeCommand toolhost.call: the one argument is toolhost/call's params."""
    from lsp_server.protocol import CallParams  # loaded with the runtime
    from lsp_server.protocol.wire_types import misfits

    if len(args) != 1:
        problem = f"takes one argument (toolhost/call's params), got {len(args)} @ params.arguments"
        raise invalid_params("toolhost.call", [problem], CallParams)
    try:
        params: CallParams = converter.structure(args[0], CallParams)
    except (cattrs.BaseValidationError, ValueError, TypeError) as exc:
        problems = misfits(exc, args[0], "params.arguments[0]")
        raise invalid_params("toolhost.call", problems, CallParams) from None
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
