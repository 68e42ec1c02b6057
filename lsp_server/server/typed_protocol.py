"""The toolhost/* messages typed from the one method table in lsp_server/protocol/methods.py
(pygls gets a message and response type per method), the camelCase converter, and the
experimental `toolhost` capability in the initialize answer."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcInternalError
from pygls.protocol import lsp_method

from lsp_server.runtime.results import held_reports
from lsp_server.server import wire_errors
from lsp_server.server.inbound import InboundProtocol
from lsp_server.wire import json_bytes, method_names

if TYPE_CHECKING:
    from lsp_server import protocol
    from lsp_server.server.server import ToolhostServer

log = logging.getLogger(__name__)


def _message_type(spec: protocol.MethodSpec) -> type[Any]:
    fields = {
        "params": attrs.field(type=spec.params),
        "method": attrs.field(type=str),
        "jsonrpc": attrs.field(type=str),
    }
    if spec.result is not None:
        fields = {"id": attrs.field(type=Any), **fields}
    return attrs.make_class(spec.params.__name__ + "Message", fields)


def _response_type(spec: protocol.MethodSpec) -> type[Any]:
    assert spec.result is not None
    fields = {
        "id": attrs.field(type=Any),
        "result": attrs.field(type=spec.result | None, default=None),  # type: ignore[arg-type]
        "jsonrpc": attrs.field(type=str, default="2.0"),
    }
    return attrs.make_class(spec.result.__name__ + "Response", fields)


@attrs.frozen
class MessageTables:
    """pygls' message and response type of every toolhost/* method, from the one table."""

    messages: dict[str, type[Any]]
    responses: dict[str, type[Any]]
    method_of_response: dict[type[Any], str]

    @classmethod
    def build(cls) -> MessageTables:
        from lsp_server import protocol  # the message types: after the initialize answer

        messages = {spec.method: _message_type(spec) for spec in protocol.METHODS}
        responses = {spec.method: _response_type(spec) for spec in protocol.METHODS if spec.result}
        return cls(messages, responses, {kind: name for name, kind in responses.items()})


def toolhost_converter() -> cattrs.Converter:
    """lsprotocol's converter with the toolhost/* message hooks (camelCase on the wire)."""
    from lsp_server import protocol

    return protocol.register_message_hooks(get_converter())


_READY: list[tuple[cattrs.Converter, MessageTables]] = []
"""Made by the warm process before it forks (`make_ready`): taken by the server it forks."""


def make_ready() -> None:
    """For the warm process (lsp_server/warm): the server's converter with every hook made,
    and the message tables, once, before it forks; each `toolhost serve --warm` it forks
    takes both instead of generating the same cattrs code again (~140 ms)."""
    if _READY:
        return
    converter = lazy_toolhost_converter()
    tables = MessageTables.build()
    _make_hooks(converter, tables)
    json_bytes.load()
    _READY.append((converter, tables))


def _ready_tables(converter: cattrs.Converter) -> MessageTables | None:
    return _READY[0][1] if _READY and _READY[0][0] is converter else None


def lazy_toolhost_converter() -> cattrs.Converter:
    """The server's converter: the same hooks as `toolhost_converter`, each made the first
    time its type is (un)structured, by hook factories registered before any use (hooks
    added after the first message would empty cattrs' caches of every other type), so that
    neither the message types nor their hooks are loaded before the initialize answer.
    (In a warm start's child, the one `make_ready` made.)"""
    if _READY:
        return _READY[0][0]
    converter = get_converter()

    def structure(cls: type[Any]) -> Any:
        from lsp_server.protocol.converter import structure_fn

        return structure_fn(cls, converter)

    def unstructure(cls: type[Any]) -> Any:
        from lsp_server.protocol.converter import unstructure_fn

        return unstructure_fn(cls, converter)

    converter.register_structure_hook_factory(_is_message_type, structure)
    converter.register_unstructure_hook_factory(_is_message_type, unstructure)
    return converter


def _make_hooks(converter: cattrs.Converter, tables: MessageTables) -> None:
    from lsp_server.protocol import MESSAGE_TYPES

    for kind in MESSAGE_TYPES:  # what register_message_hooks makes, both ways
        converter.get_structure_hook(kind)
        converter.get_unstructure_hook(kind)
    # The envelopes one way only: requests and notifications arrive (or leave) as
    # messages, results leave (or arrive) as responses; the other way is made on use.
    for kind in tables.messages.values():
        converter.get_structure_hook(kind)
    for kind in tables.responses.values():
        converter.get_unstructure_hook(kind)


def _is_message_type(cls: Any) -> bool:
    if not str(getattr(cls, "__module__", "")).startswith("lsp_server.protocol."):
        return False  # the module name first: nothing is imported for lsprotocol's types
    from lsp_server.protocol import MESSAGE_TYPES

    return cls in MESSAGE_TYPES


class ToolhostProtocol(InboundProtocol):
    """Types the toolhost/* messages from one table; adds the experimental capability."""

    _server: ToolhostServer
    _tables: MessageTables | None = None
    _after_answer: Callable[[], None] | None = None
    """Run (soon) once the next response has been handed to the writer: the warm-up,
    after the initialize answer."""

    def __init__(self, server: Any, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self._held_reports: dict[Any, Callable[[], None]] = {}
        """A running call's release of its held reports (audit line, didCall, index
        refresh), by request id: they go out once its answer has been written."""

    def toolhost_types(self) -> MessageTables:
        """The toolhost/* message types, loaded on first need (the first toolhost/* message
        either way, or the runtime's build): a cold start answers initialize without them.
        Their converter hooks come with their first use (`lazy_toolhost_converter`)."""
        if self._tables is None:
            self._tables = _ready_tables(self._converter)
        if self._tables is None:
            warm_up = self._server.warm_up
            prepared = warm_up.prepared if warm_up.done else None
            self._tables = (
                prepared if isinstance(prepared, MessageTables) else MessageTables.build()
            )
        return self._tables

    def prepare_types(self) -> MessageTables:
        """New tables with every converter hook made (the warm-up thread runs this; the loop
        adopts the tables in `toolhost_types`). The converter's hook factories were all
        registered when it was made: here its caches only fill."""
        ready = _ready_tables(self._converter)
        if ready is not None:
            return ready
        tables = MessageTables.build()
        _make_hooks(self._converter, tables)
        json_bytes.load()
        return tables

    def make_message_hooks(self) -> None:
        """Make every toolhost/* type's converter hooks now (with the runtime), not on each
        type's first message: the first call and the first status pay nothing for them
        (after the warm-up they are made already)."""
        _make_hooks(self._converter, self.toolhost_types())

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if isinstance(method, str) and method.startswith(method_names.PREFIX):
            found = self.toolhost_types().messages.get(method)
            if found is not None:
                return found
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if isinstance(method, str) and method.startswith(method_names.PREFIX):
            found = self.toolhost_types().responses.get(method)
            if found is not None:
                return found
        return super().get_result_type(method)

    def _send_data(self, data: Any) -> None:
        """pygls' own, with the body from json_bytes (orjson once warm) and its length
        counted in bytes."""
        if not data:
            return
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        try:
            body = json_bytes.encode(data, self._serialize_message)
            if self._include_headers:
                body = b"Content-Length: %d\r\nContent-Type: %s; charset=%s\r\n\r\n%s" % (
                    len(body),
                    self.CONTENT_TYPE.encode(),
                    self.CHARSET.encode(),
                    body,
                )
            self.writer.write(body)  # toolhost's writers (stdio, TCP) write synchronously
        except BrokenPipeError:
            log.exception("Error sending data. BrokenPipeError")
            raise
        except Exception as error:
            log.exception("Error sending data")
            self._server._report_server_error(error, JsonRpcInternalError)

    def handle_message(self, message: Any) -> None:
        """pygls' dispatch by the message's fields, told with hasattr: pygls asks
        `isinstance` of its runtime-checkable Protocols, which Python 3.11 answers by
        walking each Protocol's members, ~10 us a message here (4 % of a read's round trip)."""
        if message.jsonrpc != self.VERSION or self._shutdown:
            super().handle_message(message)  # pygls warns and drops, or lets `exit` through
            return
        context = contextvars.copy_context()  # each handler in its own, as pygls runs them
        if hasattr(message, "method") and hasattr(message, "params"):
            if hasattr(message, "id"):
                context.run(self._handle_request, message.id, message.method, message.params)
            else:
                context.run(self._handle_notification, message.method, message.params)
        elif hasattr(message, "id") and hasattr(message, "result"):
            context.run(self._handle_response, message.id, message.result)
        else:
            context.run(self._handle_response, message.id, None, message.error)

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        """A call's reports wait for its answer, as on the MCP face: the answer's round trip
        does not carry the audit line's append, the didCall's encoding or the index's
        refresh. pygls runs each message in its own copy of the context, which the call's
        task inherits, so the hold is this call's alone."""
        if method_name in _CALLS:
            earlier = self._held_reports.pop(msg_id, None)
            if earlier is not None:  # an id the client reused while its call still ran
                earlier()
            self._held_reports[msg_id] = held_reports.hold_in_this_context()
        super()._handle_request(msg_id, method_name, params)

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: Any | None = None
    ) -> None:
        """No traceback or exception text goes over the wire (it stays in the log)."""
        super()._send_response(msg_id, result, wire_errors.safe(error))
        hook, self._after_answer = self._after_answer, None
        release = self._held_reports.pop(msg_id, None)
        for after in (hook, release):
            if after is not None:  # after the writer's own flush, which is already scheduled
                asyncio.get_running_loop().call_soon(after)

    def answered_method(self, answered: Any) -> str:
        found = self.toolhost_types().method_of_response.get(answered)
        return found or super().answered_method(answered)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"toolhost": self._server.advertised()}
        self._after_answer = self._server.after_initialize_answer
        return result


_CALLS = frozenset({method_names.TOOLHOST_CALL, types.WORKSPACE_EXECUTE_COMMAND})
"""Requests whose tool calls report (executeCommand's toolhost.call is the same call)."""
