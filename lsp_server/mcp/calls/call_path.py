"""The one path of an MCP `tools/call`, after its front has read the request: the stdio
front's fast path (mcp/stdio/fast.py) and the SDK's handler (mcp/server.py, both transports)
each read the request their own way, then hand it here.

Here: who made the call (the client's name, for what approves in its name), how an approval
form reaches the user, where the call's progress goes (in order, before its answer), the
router's call (the attached editor's runtime or a local one: router.py), and whether the tool
exists at all (an unknown tool is a JSON-RPC error, raised as UnknownTool).

How a form reaches the user is the front's to say, by the revision and what the client
declared: `call` with a request to the client per form (`elicitation/create`), or with none
(nobody is asked: the policy decides alone); `call_in_rounds` (or `_here`, in the request's
own task) on 2026-07-28 without server-to-client requests: the form goes back as
`input_required`, and `resume` takes the client's retry with its answer (input_required.py).

Standard library only at import: the front loads it before the SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from lsp_server.mcp.calls.progress_relay import Deliver, ProgressRelay

if TYPE_CHECKING:
    from lsp_server.mcp.calls.input_required import AnswerEarly, Run
    from lsp_server.mcp.calls.tool_calls import Calls
    from lsp_server.runtime.context import Elicit


class ToolCall(NamedTuple):
    """One tools/call request, as its front read it."""

    name: str
    arguments: Any
    client: dict[str, str]
    """The client's `clientInfo`: its name and version."""
    connection: str = ""
    """The toolhost session of this MCP connection when one server has several (Streamable
    HTTP); "" on stdio."""
    progress: Deliver | None = None
    """Where the call's progress goes (the request came with a progress token), or None."""


class UnknownTool(Exception):
    """tools/call of a tool that does not exist, as revision 2025-11-25 wants it: the
    JSON-RPC error (-32602, the nearest tools in `data`), after the runtime has recorded the
    call like any other."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.error = error


async def call(calls: Calls, request: ToolCall, elicit: Elicit | None) -> dict[str, Any]:
    """The call's MCP result, its approval forms sent by `elicit` (None: nobody is asked)."""
    relay = ProgressRelay(request.progress) if request.progress is not None else None
    try:
        result = await calls.router().call(
            request.name, request.arguments, relay, request.client, request.connection, elicit
        )
    finally:
        if relay is not None:
            await relay.close()  # its progress before its answer
    return _known(calls, request.name, result)


async def call_in_rounds(calls: Calls, request: ToolCall) -> dict[str, Any]:
    """2026-07-28 without server-to-client requests, the call in a task of its own (the SDK's
    handler): its result, or the `input_required` answer naming the form it waits on."""
    result = await calls.rounds().start(_in_rounds(calls, request), request.progress)
    return _known(calls, request.name, result)


async def call_in_rounds_here(
    calls: Calls, request: ToolCall, answer_early: AnswerEarly
) -> dict[str, Any] | None:
    """As `call_in_rounds`, the call in this task (the front's: no second task, no hop between
    tasks, for the many calls that ask nothing); its first form is answered through
    `answer_early`, and then None is returned (the call goes on for the client's retry)."""
    run = _in_rounds(calls, request)
    result = await calls.rounds().run_here(run, request.progress, answer_early)
    return None if result is None else _known(calls, request.name, result)


def _in_rounds(calls: Calls, request: ToolCall) -> Run:
    """The call, given the form's asker (the round trips': the form goes back as
    input_required) and where its progress goes."""
    router = calls.router()

    async def run(elicit: Elicit, relay: ProgressRelay) -> dict[str, Any]:
        return await router.call(
            request.name, request.arguments, relay, request.client, request.connection, elicit
        )

    return run


async def resume(
    calls: Calls, state: str, responses: dict[str, Any], progress: Deliver | None
) -> dict[str, Any]:
    """The client's retry with its answer to the form a call waits on (`state`: its
    requestState): the call goes on, its progress to the retry; its result, or the next form.
    UnknownRequestState when no call waits on `state`."""
    return await calls.rounds().resume(state, responses, progress)


def _known(calls: Calls, name: str, result: dict[str, Any]) -> dict[str, Any]:
    """The result, unless the tool does not exist (UnknownTool)."""
    if not calls.unknown(name, result):
        return result
    from lsp_server.mcp.calls.results import unknown_tool

    raise UnknownTool(unknown_tool(name, result, calls.registry().names(calls.surface)))
