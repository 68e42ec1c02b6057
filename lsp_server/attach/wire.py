"""JSON-RPC 2.0 on the attach socket: one compact JSON message per line.

Between `toolhost mcp` and the editor's `toolhost serve` only:
  -> {"id": 1, "method": "toolhost/attach", "params": {"token", "client": {name, version},
      "session"}}                      first message; a wrong token closes the connection
  <- {"id": 1, "result": {"session", "root", "pid", "version"}}
  -> {"id": N, "method": "toolhost/call", "params": <CallParams as on the LSP face>}
  <- {"id": N, "result": <CallResult as on the LSP face>}
  <- {"method": "toolhost/progress", "params": {"token", "value"}}   for a call's workDoneToken
  -> {"method": "$/cancelRequest", "params": {"id": N}}
Or, instead of attaching (`toolhost doctor`), one question and the connection closes:
  -> {"id": 1, "method": "toolhost/status", "params": {"token"}}
  <- {"id": 1, "result": {"editor", "lspAnswers"}}
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import TYPE_CHECKING, Any

from lsp_server.wire import json_bytes

if TYPE_CHECKING:  # `toolhost mcp` attached to an editor frames lines and converts nothing
    import cattrs

    from lsp_server.protocol import CallParams

ATTACH = "toolhost/attach"
CALL = "toolhost/call"
PROGRESS = "toolhost/progress"
CANCEL = "$/cancelRequest"
STATUS = "toolhost/status"

# A call result is bounded by the output contract, but arguments are the model's: allow big.
LINE_LIMIT = 64 * 1024 * 1024

WRONG_TOKEN = -32001
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601


class ConnectionLost(Exception):
    """The other side went away."""


def encode(message: dict[str, Any]) -> bytes:
    """One line of UTF-8 JSON; a message holding a lone surrogate (a client's argument, a
    file name that is not UTF-8) with `\\uXXXX` escapes, which `read_message` reads back as
    the same string (raw surrogateescape bytes were not UTF-8: the reader dropped them)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


def encode_answer(message: dict[str, Any]) -> bytes:
    """A call's answer as the editor's LSP face writes the same result (json_bytes: orjson
    once `toolhost serve`'s warm-up has loaded it, a 4 KiB read's answer in about 1 us
    against 26); what orjson refuses (a lone surrogate from a file name, an integer over 64
    bits) as `encode` writes it."""
    dumps = json_bytes.loaded_dumps()
    if dumps is not None:
        try:
            return dumps(message) + b"\n"
        except TypeError:  # orjson.JSONEncodeError
            pass
    return encode(message)


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message; None at end of stream; ValueError for a line that is not one."""
    try:
        line = await reader.readline()
    except (asyncio.LimitOverrunError, ValueError) as exc:
        raise ConnectionLost(f"a message over {LINE_LIMIT} bytes") from exc
    except OSError as exc:
        raise ConnectionLost(str(exc)) from exc
    if not line:
        return None
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("a JSON-RPC message must be an object")
    return message


def error(message_id: Any, code: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": text}}


def call_params(raw: Any) -> CallParams:
    """toolhost/call params from their wire form; ValueError names what is wrong."""
    from lsp_server.protocol import CallParams

    if not isinstance(raw, dict):
        raise ValueError("params must be an object")
    name = raw.get("name")
    if not isinstance(name, str):
        raise ValueError("params.name must be a string")
    surface = raw.get("surface")
    if surface not in (None, "core", "full", "minimal"):
        raise ValueError("params.surface must be core, full or minimal")
    token = raw.get("workDoneToken")
    if token is not None and not isinstance(token, (str, int)):
        raise ValueError("params.workDoneToken must be a string or an integer")
    call_id = raw.get("callId")
    return CallParams(
        name=name,
        arguments=raw.get("arguments"),
        call_id=call_id if isinstance(call_id, str) else None,
        work_done_token=token,
        surface=surface,
    )


@functools.cache
def converter() -> cattrs.Converter:
    """The LSP face's converter (camelCase, unions of str and int): results look the same."""
    from lsprotocol.converters import get_converter  # about a second to import: on first use

    from lsp_server.protocol import register_message_hooks

    return register_message_hooks(get_converter())


@functools.cache
def result_converter() -> cattrs.Converter:
    """The same camelCase dicts for toolhost's messages without importing lsprotocol (for
    `toolhost mcp`'s local runtime, as `toolhost call` does; tests/mcp/test_front.py
    compares the two)."""
    from lsp_server.protocol import message_converter

    return message_converter()
