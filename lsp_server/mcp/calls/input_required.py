"""Approval forms on the 2026-07-28 revision, which has no server-to-client requests: the call
runs on; when it needs the user, `tools/call` answers `input_required` with the form, and the
client retries with the answer and the `requestState` that names the waiting call. The call's
progress goes to the request open for it: the first, then each retry (Claude Code shows the
latest line of a running command under the call)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import attrs

from lsp_server.mcp.calls.elicit import unreadable_answer
from lsp_server.mcp.calls.progress_relay import Deliver, ProgressRelay
from lsp_server.runtime.context import Elicit

APPROVAL_KEY = "approval"
# How long a finished call whose client never came back is kept for it.
ABANDONED_SECONDS = 600.0


class UnknownRequestState(Exception):
    """A retry names no waiting call (finished, forgotten, or never made here)."""


# The call: given the form's asker and where its progress goes.
Run = Callable[[Elicit, ProgressRelay], Coroutine[Any, Any, dict[str, Any]]]
# Writes the answer to the request that started a call run in its own task (run_here).
AnswerEarly = Callable[[dict[str, Any]], Awaitable[None]]


@attrs.define
class _Waiting:
    relay: ProgressRelay
    task: asyncio.Task[Any] | None = None
    """The task the call runs in: its own (start), or its first request's (run_here)."""
    key: str | None = None
    """The `requestState` naming this call, made when it first asks."""
    question: tuple[str, dict[str, Any]] | None = None
    step: asyncio.Future[None] | None = None
    """Done when the call asks or finishes, whichever comes first."""
    answer: asyncio.Future[tuple[str, dict[str, Any] | None]] | None = None
    outcome: dict[str, Any] | None = None
    error: BaseException | None = None

    @property
    def finished(self) -> bool:
        return self.outcome is not None or self.error is not None

    def wake(self) -> None:
        if self.step is not None and not self.step.done():
            self.step.set_result(None)

    def finish(self, outcome: dict[str, Any] | None, error: BaseException | None = None) -> None:
        self.outcome, self.error = outcome, error
        self.wake()

    def result(self) -> dict[str, Any]:
        if self.error is not None:
            raise self.error
        assert self.outcome is not None
        return self.outcome


class RoundTrips:
    def __init__(self) -> None:
        self._waiting: dict[str, _Waiting] = {}

    async def start(self, run: Run, progress: Deliver | None = None) -> dict[str, Any]:
        """Run the call in a task of its own; its result, or the form it waits on
        (input_required). `progress`: the request's own progress (its token), if it has one."""
        waiting = _Waiting(ProgressRelay(progress))
        waiting.task = asyncio.create_task(self._body(waiting, run))
        return await self._step(waiting)

    async def run_here(
        self, run: Run, progress: Deliver | None, answer_early: AnswerEarly
    ) -> dict[str, Any] | None:
        """Run the call in this task, its request's own (the front's): its result, as
        without forms, when it asks nothing (every read of Claude Code's: no second task, no
        hop between tasks). When it asks, the input_required answer goes out through
        `answer_early`, the call goes on here for the client's retry (resume), and this
        returns None."""
        waiting = _Waiting(ProgressRelay(progress), asyncio.current_task())
        try:
            outcome = await run(self._asker(waiting, answer_early), waiting.relay)
        except BaseException as exc:
            if waiting.key is None:  # its request's own error, or its cancellation
                waiting.relay.abandon()
                raise
            waiting.finish(None, exc)  # for the retry waiting on it
            if isinstance(exc, asyncio.CancelledError):
                raise
            return None
        if waiting.key is None:
            await waiting.relay.close()  # its progress before its answer
            return outcome
        waiting.finish(outcome)
        return None

    async def _body(self, waiting: _Waiting, run: Run) -> None:
        try:
            waiting.finish(await run(self._asker(waiting), waiting.relay))
        except asyncio.CancelledError as exc:
            waiting.finish(None, exc)
            raise
        except Exception as exc:  # the handler's to raise
            waiting.finish(None, exc)

    def _asker(self, waiting: _Waiting, answer_early: AnswerEarly | None = None) -> Elicit:
        async def elicit(message: str, schema: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
            waiting.answer = asyncio.get_running_loop().create_future()
            waiting.question = (message, schema)
            if answer_early is not None and waiting.key is None:
                await answer_early(await self._input_required(waiting))
            else:
                waiting.wake()
            return await waiting.answer

        return elicit

    async def resume(
        self, state: str, responses: dict[str, Any], progress: Deliver | None = None
    ) -> dict[str, Any]:
        """The client's retry with its answer: the call goes on, its progress to the retry."""
        waiting = self._waiting.get(state)
        if waiting is None or waiting.answer is None or waiting.answer.done():
            raise UnknownRequestState(state)
        waiting.relay.retarget(progress)
        response = responses.get(APPROVAL_KEY)
        action = getattr(response, "action", None)
        content = getattr(response, "content", None)
        if isinstance(action, str):
            waiting.answer.set_result((action, dict(content) if content else None))
        else:  # no answer to the form, or another kind of answer (a sampling result)
            dump = getattr(response, "model_dump", None)
            sent = dump() if callable(dump) else response
            problem = f"inputResponses.{APPROVAL_KEY} is not an elicitation answer"
            waiting.answer.set_exception(unreadable_answer(sent, problem))
        return await self._step(waiting)

    async def _step(self, waiting: _Waiting) -> dict[str, Any]:
        assert waiting.task is not None
        if not waiting.finished:
            # Made before the call runs on (nothing is awaited between its wake-up and here).
            waiting.step = asyncio.get_running_loop().create_future()
            try:
                await waiting.step
            except asyncio.CancelledError:
                waiting.task.cancel()  # the client cancelled the call itself
                waiting.relay.abandon()
                self._forget(waiting)
                raise
        if waiting.finished:
            self._forget(waiting)
            await waiting.relay.close()  # its progress before its answer
            return waiting.result()
        return await self._input_required(waiting)

    async def _input_required(self, waiting: _Waiting) -> dict[str, Any]:
        """The answer naming the form the call waits on; the request it answers hears no
        more of the call's progress."""
        assert waiting.question is not None and waiting.task is not None
        await waiting.relay.mute()
        if waiting.key is None:
            key = waiting.key = secrets.token_urlsafe(24)
            self._waiting[key] = waiting
            # A client that never answers: the policy's own approval timeout denies, then the
            # finished call is dropped after a while.
            waiting.task.add_done_callback(lambda _: self._forget_later(key))
        message, schema = waiting.question
        return {
            "resultType": "input_required",
            "inputRequests": {
                APPROVAL_KEY: {
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": message, "requestedSchema": schema},
                }
            },
            "requestState": waiting.key,
        }

    def _forget(self, waiting: _Waiting) -> None:
        if waiting.key is not None:
            self._waiting.pop(waiting.key, None)

    def _forget_later(self, key: str) -> None:
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().call_later(
                ABANDONED_SECONDS, lambda: self._waiting.pop(key, None)
            )
