"""toolhost's refusals as ACP (JSON-RPC) errors: `message` is `<CODE>: <cause>; <recovery>`,
`data` is `{code, recovery}` (and details when there are any), so an agent shows its model
the same sentence every other face shows."""

from __future__ import annotations

from typing import Any

from lsp_server.acp.ndjson import INVALID_PARAMS, REFUSED
from lsp_server.core import errors
from lsp_server.protocol import CallResult, ErrorInfo

# Input the agent got wrong: JSON-RPC's own "invalid params"; every other refusal is -32000.
_INVALID_INPUT = {errors.SCHEMA_MISMATCH, errors.INVALID_ARGUMENT}


def refusal(
    code: str, cause: str, recovery: str, details: Any = None, rpc_code: int | None = None
) -> dict[str, Any]:
    """The JSON-RPC error object of one refusal."""
    data: dict[str, Any] = {"code": code, "recovery": recovery}
    if details:
        data["details"] = details
    message = f"{code}: {cause}; {recovery}" if recovery else f"{code}: {cause}"
    number = rpc_code if rpc_code is not None else _rpc_code(code)
    return {"code": number, "message": message, "data": data}


def of_call(result: CallResult) -> dict[str, Any]:
    """The error object of a call that failed (result.error is set)."""
    info = result.error
    assert info is not None
    return refusal(info.code, _cause(info), info.recovery, _details(info))


def _cause(info: ErrorInfo) -> str:
    """ErrorInfo.message is `<code>: <cause>; <recovery>` except for schema_mismatch."""
    message = info.message
    prefix = f"{info.code}: "
    if message.startswith(prefix):
        message = message[len(prefix) :]
    suffix = f"; {info.recovery}"
    if info.recovery and message.endswith(suffix):
        message = message[: -len(suffix)]
    return message


def _details(info: ErrorInfo) -> dict[str, Any] | None:
    details: dict[str, Any] = dict(info.details) if isinstance(info.details, dict) else {}
    if info.violations:
        details["violations"] = info.violations
    return details or None


def _rpc_code(code: str) -> int:
    return INVALID_PARAMS if code in _INVALID_INPUT else REFUSED


class Refused(Exception):
    """A request toolhost serves was refused; `error` is the JSON-RPC error object."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.error = error


def refuse(code: str, cause: str, recovery: str, rpc_code: int | None = None) -> Refused:
    return Refused(refusal(code, cause, recovery, rpc_code=rpc_code))
