"""What arrives, read into its type or refused in a client author's words, with no
traceback for what the client got wrong (pygls logs each with one):

- a request whose id is not an integer or a string, or whose method is not a string:
  -32600, answered to the id (to null when the id itself is unusable);
- a request sent with an id to a notification method: -32600, nothing run;
- params that do not fit the method: -32602 naming the fields (`required field missing @
  params.name`), with the shape for a toolhost method (server/wire_errors.py);
- a handler's refusal (invalid params, not initialized ...): its error, one warning line;
- an answer of the client that cannot be read: it fails the request that waits for it.

Each refusal is one warning line (method, id, reason); a bug keeps its traceback."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import Any

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

from lsp_server.server import wire_errors

log = logging.getLogger(__name__)


class InboundProtocol(LanguageServerProtocol):
    """pygls' protocol, reading what arrives as the module says."""

    def __init__(self, server: Any, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self._notifications: dict[str, bool] = {}  # per known method: is it one?

    def answered_method(self, answered: Any) -> str:
        """The method of the request whose answer has the type `answered` (for the log)."""
        return str(getattr(answered, "__name__", "a request"))

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Each message read into its type, or refused in a client author's words with no
        traceback: a request whose id or method cannot be one (-32600), or whose params do
        not fit (-32602, field by field), is answered with an error and one warning line,
        then raised for the wire's loop (transport.py), which drops it."""
        if "jsonrpc" not in data:
            return data  # a nested object (the TCP wire parses with this as object_hook)
        if "method" not in data:
            return self._structure_answer(data)
        method = data["method"]
        refusal: JsonRpcException | None = wire_errors.invalid_request(data)
        if refusal is None and "id" in data and self._is_notification(method):
            # A request to a notification method would get no answer at all (pygls runs it
            # as a notification): answer it with an error, and run nothing.
            refusal = JsonRpcInvalidRequest(
                f"{method} is a notification: send it without an id (nothing was done)"
            )
        if refusal is None:
            message_type = self.get_message_type(method)
            if message_type is None:  # no such method: pygls answers -32601, params or not
                message_type = JsonRPCRequestMessage if "id" in data else JsonRPCNotification
                data = {"params": None, **data}
            try:
                return self._structure_request(data, message_type)
            except cattrs.BaseValidationError as exc:
                refusal = wire_errors.params_refusal(method, data, message_type, exc)
            except Exception:  # not the input: a bug of a hook, with its traceback
                log.exception("reading a %s message failed", wire_errors.one_line(method, 80))
                refusal = JsonRpcInternalError()
        msg_id = data.get("id")
        log.warning(
            "refused %s (id %s): %s",
            wire_errors.one_line(repr(method), 80),
            wire_errors.one_line(repr(msg_id), 80),
            refusal.message,
        )
        if "id" in data and wire_errors.usable_id(msg_id):
            self._send_response(msg_id, error=refusal.to_response_error())
        elif "id" in data:  # an id that cannot be answered to: at null, which pygls leaves out
            error = {"code": refusal.code, "message": refusal.message}
            self._send_data({"jsonrpc": "2.0", "id": None, "error": error})
        raise refusal

    def _structure_request(self, data: dict[str, Any], message_type: Any) -> Any:
        """LSP lets a request leave its params out: then they are an empty object, which a
        method whose params are all optional (toolhost/status) takes."""
        try:
            return self._converter.structure(data, message_type)
        except cattrs.BaseValidationError:
            if "params" in data:
                raise
        return self._converter.structure({**data, "params": {}}, message_type)

    def _structure_answer(self, data: dict[str, Any]) -> Any:
        """The client's answer to one of our requests. One that cannot be read fails the
        request that waits for it (pygls would drop it, and the waiter would wait out its
        whole timeout)."""
        msg_id = data.get("id")
        if not wire_errors.usable_id(msg_id):
            problem = "a message with no method and no integer or string id (no request)"
            log.warning("dropped %s", problem)
            raise JsonRpcInvalidRequest(f"invalid request: {problem}")
        answered = self._result_types.pop(msg_id, None)
        kind = types.ResponseErrorMessage if "error" in data else answered
        try:
            return self._converter.structure(data, kind or JsonRPCResponseMessage)
        except cattrs.BaseValidationError as exc:
            from lsp_server.protocol.wire_types import misfits

            problem = wire_errors.summed_up(misfits(exc, data, "$"))
        except Exception:  # not the answer: a bug of a hook, with its traceback
            log.exception("reading the answer to %r failed", msg_id)
            problem = "it does not fit the answer's type"
        return self._unreadable_response(msg_id, data, answered, problem)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        """A handler's refusal of what the client sent (a JsonRpcException other than
        -32603: invalid params, not initialized ...) is answered with one warning line;
        pygls logs each with a traceback, which stays for real errors."""
        refusal = None if future.cancelled() else future.exception()
        if not isinstance(refusal, JsonRpcException) or refusal.code == wire_errors.INTERNAL_ERROR:
            super()._send_handler_result(future, msg_id=msg_id)
            return
        self._request_futures.pop(msg_id, None)
        log.warning("refused request %s: %s", wire_errors.one_line(repr(msg_id), 80), refusal)
        self._send_response(msg_id, error=refusal.to_response_error())

    def _is_notification(self, method: Any) -> bool:
        """The method's message type has no id: it is a notification (didOpen, $/cancelRequest,
        initialized, exit ...)."""
        if not isinstance(method, str):
            return False
        known = self._notifications.get(method)
        if known is not None:
            return known
        message_type = self.get_message_type(method)
        if message_type is None:
            return False  # not kept: any string can come here
        known = self._notifications[method] = attrs.has(message_type) and (
            "id" not in attrs.fields_dict(message_type)
        )
        return known

    def _unreadable_response(
        self, msg_id: int | str, data: dict[str, Any], answered: Any, problem: str
    ) -> types.ResponseErrorMessage:
        """An error response carrying the UnreadableAnswer (an object no wire message can
        hold), which EditorBridge.request raises to the waiter."""
        method = self.answered_method(answered)
        from lsp_server.core.client import UnreadableAnswer

        answer = UnreadableAnswer.of(data.get("error", data.get("result")), problem)
        # For the editor's developer: which answer, what was wrong, what it sent.
        log.warning(
            "the editor's answer to %s (id %r) cannot be read: %s; it sent %s",
            method,
            msg_id,
            problem,
            answer.sent,
        )
        error = types.ResponseError(
            code=JsonRpcInvalidParams.CODE, message=str(answer), data=answer
        )
        return types.ResponseErrorMessage(id=msg_id, error=error)
