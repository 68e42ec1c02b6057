"""On 2026-07-28 a call that asks for approval outlives the request that started it
(mcp/calls/input_required.py), whether it runs in a task of its own (the SDK's handler) or in its
request's own task (the front's): the retry gets its result, and its progress goes to the
request open for it, the first until its form is answered as input_required, nothing while
the form waits, then the retry."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from lsp_server.mcp.calls.input_required import RoundTrips, Run, UnknownRequestState
from lsp_server.mcp.calls.progress_relay import Deliver, ProgressRelay
from lsp_server.runtime.context import Elicit


def heard(into: list[tuple[int, str | None]]) -> Deliver:
    async def deliver(count: int, message: str | None) -> None:
        into.append((count, message))

    return deliver


def report(relay: ProgressRelay, message: str) -> None:
    relay({"kind": "report", "message": message})


async def begin(
    rounds: RoundTrips, run: Run, deliver: Deliver, here: bool
) -> tuple[dict[str, Any], asyncio.Task[dict[str, Any] | None] | None]:
    """The first answer to the call's request, and (here) the task the call runs in."""
    if not here:
        return await rounds.start(run, deliver), None
    early: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    async def answer_early(asked: dict[str, Any]) -> None:
        early.set_result(asked)

    task = asyncio.create_task(rounds.run_here(run, deliver, answer_early))
    either: set[asyncio.Future[Any]] = {task, early}
    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    return (early.result() if early.done() else {"finished": await task}), task


ALLOW = type("Answer", (), {"action": "accept", "content": {"decision": "allow_once"}})()


@pytest.mark.parametrize("here", [False, True], ids=["own-task", "request-task"])
async def test_progress_goes_to_the_request_open_for_the_call(here: bool) -> None:
    first: list[tuple[int, str | None]] = []
    retry: list[tuple[int, str | None]] = []
    form_open = asyncio.Event()

    async def run(elicit: Elicit, relay: ProgressRelay) -> dict[str, Any]:
        report(relay, "before the form")
        relay({"kind": "begin"})  # not a report: heard by nobody
        asking = asyncio.ensure_future(elicit("Allow?", {}))
        await form_open.wait()
        report(relay, "while the form waits")  # its request is answered: nobody hears it
        action, _ = await asking
        report(relay, f"after {action}")
        return {"content": [], "isError": False}

    rounds = RoundTrips()
    asked, task = await begin(rounds, run, heard(first), here)
    assert asked["resultType"] == "input_required"
    assert first == [(1, "before the form")]  # delivered before the input_required answer
    form_open.set()
    await asyncio.sleep(0.01)
    done = await rounds.resume(asked["requestState"], {"approval": ALLOW}, heard(retry))
    assert done == {"content": [], "isError": False}
    assert first == [(1, "before the form")]
    assert retry == [(1, "after accept")]  # the retry's own count, before its answer
    if task is not None:
        assert await task is None  # its request was answered early: nothing more to write
    with pytest.raises(UnknownRequestState):  # answered: the state names nothing now
        await rounds.resume(asked["requestState"], {"approval": ALLOW})


async def test_a_call_that_asks_nothing_answers_its_own_request_in_its_task() -> None:
    async def run(elicit: Elicit, relay: ProgressRelay) -> dict[str, Any]:
        return {"content": [], "isError": False, "task": asyncio.current_task()}

    async def answer_early(asked: dict[str, Any]) -> None:
        raise AssertionError("nothing was asked")

    result = await RoundTrips().run_here(run, None, answer_early)
    assert result is not None and result["task"] is asyncio.current_task()


@pytest.mark.parametrize("here", [False, True], ids=["own-task", "request-task"])
async def test_a_cancelled_retry_cancels_the_call(here: bool) -> None:
    ended = asyncio.Event()

    async def run(elicit: Elicit, relay: ProgressRelay) -> dict[str, Any]:
        await elicit("Allow?", {})
        try:
            await asyncio.sleep(60)
        finally:
            ended.set()
        return {}

    rounds = RoundTrips()
    asked, _ = await begin(rounds, run, heard([]), here)
    retry = asyncio.create_task(rounds.resume(asked["requestState"], {"approval": ALLOW}))
    await asyncio.sleep(0.01)
    retry.cancel()
    with pytest.raises(asyncio.CancelledError):
        await retry
    await asyncio.wait_for(ended.wait(), 5)


@pytest.mark.parametrize("here", [False, True], ids=["own-task", "request-task"])
async def test_a_call_that_fails_after_its_form_fails_its_retry(here: bool) -> None:
    async def run(elicit: Elicit, relay: ProgressRelay) -> dict[str, Any]:
        await elicit("Allow?", {})
        raise RuntimeError("the tool broke")

    rounds = RoundTrips()
    asked, _ = await begin(rounds, run, heard([]), here)
    with pytest.raises(RuntimeError, match="the tool broke"):
        await rounds.resume(asked["requestState"], {"approval": ALLOW})


async def test_a_call_without_a_token_reports_to_nobody() -> None:
    async def run(elicit: Elicit, relay: ProgressRelay) -> dict[str, Any]:
        report(relay, "line")
        return {"content": [], "isError": False}

    assert await RoundTrips().start(run) == {"content": [], "isError": False}
