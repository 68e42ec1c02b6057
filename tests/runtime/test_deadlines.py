"""Calls' deadlines under one timer (runtime/deadlines.py): a call past its deadline is
cancelled and told it timed out, its task left uncancelled; somebody else's cancellation
stays a cancellation; nested calls keep their own deadlines; one timer serves them all."""

from __future__ import annotations

import asyncio

import pytest

from lsp_server.runtime.deadlines import CallDeadlines


async def bounded(deadlines: CallDeadlines, seconds: float, work: float) -> str:
    """What dispatch's _run_bounded does around a tool."""
    deadline = deadlines.start(seconds)
    try:
        await asyncio.sleep(work)
        return "done"
    except asyncio.CancelledError:
        if not deadlines.end(deadline):
            raise
        return "timed out"
    finally:
        deadlines.end(deadline)


async def test_a_call_past_its_deadline_times_out_and_its_task_goes_on() -> None:
    deadlines = CallDeadlines()

    async def call() -> tuple[str, int, str]:
        first = await bounded(deadlines, 0.05, 30)
        task = asyncio.current_task()
        assert task is not None
        after = await bounded(deadlines, 30, 0)  # the task still runs what comes next
        return first, task.cancelling(), after

    assert await asyncio.wait_for(call(), 20) == ("timed out", 0, "done")


async def test_a_call_that_ends_in_time_is_not_cancelled_later() -> None:
    deadlines = CallDeadlines()
    assert await bounded(deadlines, 0.05, 0) == "done"
    await asyncio.sleep(0.2)  # past the deadline: the timer fires and finds nothing
    assert await bounded(deadlines, 30, 0.01) == "done"


async def test_somebody_elses_cancellation_is_not_a_timeout() -> None:
    deadlines = CallDeadlines()
    task = asyncio.create_task(bounded(deadlines, 30, 30))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_nested_calls_keep_their_own_deadlines() -> None:
    """use_capability runs a tool inside a tool, in the same task."""
    deadlines = CallDeadlines()

    async def outer(inner_seconds: float, outer_seconds: float) -> tuple[str, str]:
        deadline = deadlines.start(outer_seconds)
        inner = "not run"
        try:
            inner = await bounded(deadlines, inner_seconds, 30)
            await asyncio.sleep(30)
            return inner, "done"
        except asyncio.CancelledError:
            if not deadlines.end(deadline):
                raise
            return inner, "timed out"
        finally:
            deadlines.end(deadline)

    # The inner call's is nearer: it times out, and the outer call goes on to its own.
    assert await asyncio.wait_for(outer(0.05, 0.3), 20) == ("timed out", "timed out")
    # The outer call's is nearer: the inner call is cancelled, and only the outer one's
    # deadline says timeout.
    assert await asyncio.wait_for(outer(30, 0.05), 20) == ("not run", "timed out")


async def test_a_nearer_deadline_than_the_armed_one_rearms_the_timer() -> None:
    """A limit lowered in the settings: the new call's deadline comes before the timer that
    an earlier, longer call armed."""
    deadlines = CallDeadlines()
    slow = asyncio.create_task(bounded(deadlines, 60, 0.5))
    await asyncio.sleep(0)
    assert await asyncio.wait_for(bounded(deadlines, 0.05, 30), 20) == "timed out"
    assert await slow == "done"


async def test_one_timer_serves_many_calls() -> None:
    deadlines = CallDeadlines()
    loop = asyncio.get_running_loop()
    before = len(loop._scheduled)  # type: ignore[attr-defined]
    calls = [asyncio.create_task(bounded(deadlines, 60, 0.05)) for _ in range(100)]
    await asyncio.sleep(0.01)
    # 100 sleeping calls have 100 timers of their own (asyncio.sleep); their deadlines one.
    assert len(loop._scheduled) - before == 100 + 1  # type: ignore[attr-defined]
    assert await asyncio.gather(*calls) == ["done"] * 100
