"""The toolhost/* messages typed from the one method table in protocol.py (pygls gets a
message and response type per method), the camelCase converter, and the experimental
`toolhost` capability in the initialize answer."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, lsp_method

from lsp_server import protocol
from lsp_server.server import wire_errors

if TYPE_CHECKING:
    from lsp_server.server.server import ToolhostServer


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


MESSAGE_TYPES = {spec.method: _message_type(spec) for spec in protocol.METHODS}
RESPONSE_TYPES = {
    spec.method: _response_type(spec) for spec in protocol.METHODS if spec.result is not None
}


def toolhost_converter() -> cattrs.Converter:
    return protocol.register_message_hooks(get_converter())


class ToolhostProtocol(LanguageServerProtocol):
    """Types the toolhost/* messages from one table; adds the experimental capability."""

    _server: ToolhostServer

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in MESSAGE_TYPES:
            return MESSAGE_TYPES[method]
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in RESPONSE_TYPES:
            return RESPONSE_TYPES[method]
        return super().get_result_type(method)

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: Any | None = None
    ) -> None:
        """No traceback or exception text goes over the wire (it stays in the log)."""
        super()._send_response(msg_id, result, wire_errors.safe(error))

    def structure_message(self, data: dict[str, Any]) -> Any:
        """A request whose params cannot be read gets a JSON-RPC error instead of silence."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                self._send_response(data["id"], error=exc.to_response_error())
            raise

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"toolhost": self._server.advertised()}
        return result
