"""MCP answers toolhost cannot read fail their request at once instead of being waited for.

The SDK drops a response that is no JSON-RPC message it knows (`"result": "allow_once"`,
`"result": null`, an error without a code) with a debug line: the elicitation waiting for
it would sit out the whole approval timeout. `AnswerStream` makes such a response an
error for that request, carrying an UnreadableAnswer; `form_answer` does the same for a
well-formed response whose form answer is not an ElicitResult.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from lsp_server.core.client import UnreadableAnswer, sent_preview
from lsp_server.mcp.calls.elicit import MCP_CLIENT

log = logging.getLogger(__name__)

Item = SessionMessage | Exception


class AnswerStream:
    """The transport's read stream, with each unreadable response made an error response."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    @property
    def last_context(self) -> Any:  # the dispatcher reads the sender's context here
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Item:
        return readable(await self._inner.receive())

    def __aiter__(self) -> AnswerStream:
        return self

    async def __anext__(self) -> Item:
        return readable(await self._inner.__anext__())

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AnswerStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        result: bool | None = await self._inner.__aexit__(exc_type, exc_val, exc_tb)
        return result


def readable(item: Item) -> Item:
    """`item`, or for a response the SDK could not read, an error response to that id."""
    if not isinstance(item, ValidationError):
        return item
    message = _response_in(item)
    if message is None:
        return item
    sent = message.get("error", message.get("result"))
    answer = UnreadableAnswer.of(sent, "it is not a JSON-RPC result object or error", MCP_CLIENT)
    log.warning("the MCP client's answer to request %r cannot be read: %s", message["id"], answer)
    error = types.ErrorData(code=types.INVALID_REQUEST, message=str(answer), data=answer)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=message["id"], error=error))


def _response_in(error: ValidationError) -> dict[str, Any] | None:
    """The message behind a failed parse, when it is a response: pydantic reports a
    missing `method` with the whole object as the input."""
    for detail in error.errors(include_url=False):
        message = detail.get("input")
        if (
            isinstance(message, dict)
            and "method" not in message
            and type(message.get("id")) in (int, str)
            and ("result" in message or "error" in message)
        ):
            return message
    return None


def form_answer(error: ValidationError) -> UnreadableAnswer:
    """An elicitation answer that is not an ElicitResult (`{}`, an unknown action)."""
    shown, problems = [], []
    for detail in error.errors(include_url=False)[:3]:
        where = ".".join(str(part) for part in detail["loc"]) or "the answer"
        problems.append(f"{where}: {detail['msg']}")
        value = sent_preview(detail.get("input"), 80)
        shown.append(
            f"{value} (no {where})" if detail["type"] == "missing" else f"{where} = {value}"
        )
    answer = UnreadableAnswer("; ".join(shown), "; ".join(problems), MCP_CLIENT)
    log.warning("the MCP client's elicitation answer cannot be read: %s", answer)
    return answer
