"""How the ACP face calls the runtime: Runtime.call in the ACP session's toolhost session,
a failed call as a `Refused` (its JSON-RPC error), the full text of a bounded result."""

from __future__ import annotations

from typing import Any, Literal

from lsp_server.acp.replies import Refused, of_call, refuse
from lsp_server.acp.workspaces import Served
from lsp_server.core import errors
from lsp_server.protocol import CallParams, CallResult
from lsp_server.runtime.context import NOBODY, Caller


async def call(
    served: Served,
    session_id: str,
    name: str,
    arguments: dict[str, Any],
    surface: Literal["full", "minimal"],
    caller: Caller = NOBODY,
) -> CallResult:
    params = CallParams(name=name, arguments=arguments, session=session_id, surface=surface)
    result = await served.runtime.call(params, caller=caller)
    if result.is_error:
        raise Refused(of_call(result))
    return result


def full_text(served: Served, session_id: str, result: CallResult) -> str:
    """The whole text of a result, paged back from the session's store when it was cut."""
    ref = result.meta.result_ref
    if ref is None:
        text: str = result.content[0]["text"] if result.content else ""
        return text
    for item in served.runtime.sessions.get(session_id).results.items():
        if item.ref == ref:
            return item.read().decode("utf-8", "surrogateescape")
    raise refuse(
        errors.RESULT_NOT_FOUND,
        "the full text of the read was evicted before it could be sent",
        "read the file again",
    )


def params_of(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    if not isinstance(params, dict):
        raise refuse(
            errors.INVALID_ARGUMENT,
            f"{message.get('method')} needs an object of params",
            "send the params the ACP schema gives for this method",
            rpc_code=-32602,
        )
    return params


def text_param(params: dict[str, Any], name: str, method: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value:
        raise refuse(
            errors.INVALID_ARGUMENT,
            f"{method} needs `{name}` as a non-empty string",
            f"pass `{name}` as the ACP schema gives it",
            rpc_code=-32602,
        )
    return value
