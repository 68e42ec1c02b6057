"""On 2026-07-28 a call that asks for approval outlives the request that started it; its
progress goes to the request open for it (mcp/calls/rounds.py): the first until its form is
answered as input_required, nothing while the form waits, then the client's retry."""

from __future__ import annotations

import asyncio
from typing import Any

from lsp_server.mcp.calls.current import Elicit
from lsp_server.mcp.calls.progress_relay import Deliver, ProgressRelay
from lsp_server.mcp.calls.rounds import RoundTrips


def heard(into: list[tuple[int, str | None]]) -> Deliver:
    async def deliver(count: int, message: str | None) -> None:
        into.append((count, message))

    return deliver


def report(relay: ProgressRelay, message: str) -> None:
    relay({"kind": "report", "message": message})


async def test_progress_goes_to_the_request_open_for_the_call() -> None:
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
    asked = await rounds.start(run, heard(first))
    assert asked["resultType"] == "input_required"
    assert first == [(1, "before the form")]  # delivered before the input_required answer
    form_open.set()
    await asyncio.sleep(0.01)
    answer = type("Answer", (), {"action": "accept", "content": {"decision": "allow_once"}})()
    done = await rounds.resume(asked["requestState"], {"approval": answer}, heard(retry))
    assert done == {"content": [], "isError": False}
    assert first == [(1, "before the form")]
    assert retry == [(1, "after accept")]  # the retry's own count, before its answer


async def test_a_call_without_a_token_reports_to_nobody() -> None:
    async def run(elicit: Elicit, relay: ProgressRelay) -> dict[str, Any]:
        report(relay, "line")
        return {"content": [], "isError": False}

    assert await RoundTrips().start(run) == {"content": [], "isError": False}
