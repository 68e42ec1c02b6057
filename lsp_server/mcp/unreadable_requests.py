"""The JSON-RPC error for a request the SDK cannot read, at the request's own id: the SDK
drops such a line on stdio (the request would wait for ever) and answers it at id null over
HTTP. Both transports answer it the same way (mcp/stdio/stdio_streams.py,
mcp/http/http_answers.py)."""

from __future__ import annotations

import json

import mcp_types as types

from lsp_server.mcp.sdk_json import encode, lone_surrogate
from lsp_server.wire import broken_json


def unreadable_request(text: str) -> bytes | None:
    """The JSON-RPC error for a line the SDK cannot read that is a request with an id
    (a string or an integer) to answer; None for anything else (no id to be found). A line
    that is not JSON, or nested too deeply to parse, is answered at the id its text shows."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        unparsed_id = broken_json.request_id(text.encode("utf-8", "surrogateescape"))
        if unparsed_id is None:
            return None
        why = "nested too deeply" if isinstance(exc, RecursionError) else f"not JSON: {exc}"
        error = {"code": types.PARSE_ERROR, "message": f"Parse error: the request is {why}"}
        return encode({"jsonrpc": "2.0", "id": unparsed_id, "error": error}) + b"\n"
    if not isinstance(message, dict) or "method" not in message or "result" in message:
        return None
    message_id = message.get("id")
    if isinstance(message_id, bool) or not isinstance(message_id, int | str):
        if message_id is None:
            return None  # a notification (or id null): the SDK drops it, logged
        # An id JSON-RPC does not allow (a float, an object, a boolean): answered at id null.
        error = {"code": types.INVALID_REQUEST, "message": _ODD_ID}
        return encode({"jsonrpc": "2.0", "id": None, "error": error}) + b"\n"
    if message.get("jsonrpc") != "2.0" or not isinstance(message["method"], str):
        code = types.INVALID_REQUEST
        reason = 'Invalid request: a request has "jsonrpc": "2.0", an id and a string "method"'
    elif lone_surrogate(message):
        code = types.PARSE_ERROR
        reason = _SURROGATE
    else:
        code = types.INVALID_PARAMS
        reason = "Invalid request parameters: params must be an object, or left out"
    error = {"code": code, "message": reason}
    return encode({"jsonrpc": "2.0", "id": message_id, "error": error}) + b"\n"


_ODD_ID = "Invalid request: a request's id is a string or an integer"
_SURROGATE = (
    "Parse error: the request holds a lone surrogate escape (such as \\ud800), which is "
    "not Unicode text; send the text as UTF-8"
)
