"""A plain call's answer goes out before its reports (runtime/results/held_reports.py): the
audit line and didCall are written once the answer is, off the answer's path, and none is
lost however the call ends."""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
from pathlib import Path
from typing import Any

import pytest

from lsp_server.mcp.calls.tool_calls import Calls
from lsp_server.mcp.stdio.fast import FastPath
from lsp_server.runtime.results import held_reports


def test_reports_wait_for_the_hold_and_keep_their_order() -> None:
    sent: list[str] = []
    with held_reports.held():
        held_reports.report(lambda: sent.append("first"))
        held_reports.report(lambda: sent.append("second"))
        assert sent == []
    assert sent == ["first", "second"]
    held_reports.report(lambda: sent.append("unheld"))  # no hold: at once
    assert sent[-1] == "unheld"


def test_a_block_that_fails_still_sends_its_reports() -> None:
    sent: list[str] = []
    with pytest.raises(RuntimeError), held_reports.held():
        held_reports.report(lambda: sent.append("kept"))
        raise RuntimeError("the call broke")
    assert sent == ["kept"]


async def test_a_task_that_outlives_the_hold_reports_at_once() -> None:
    """A 2026-07-28 call waiting on a form finishes after its face has answered."""
    sent: list[str] = []
    finish = asyncio.Event()

    async def later() -> None:
        await finish.wait()
        held_reports.report(lambda: sent.append("late"))

    with held_reports.held():
        task = asyncio.create_task(later())  # the hold's context is copied into it
    finish.set()
    await task
    assert sent == ["late"]


def test_a_hold_in_a_context_lasts_until_its_release() -> None:
    """The LSP face's form: the call's task ends before its answer is written, so the hold
    is set in the message's own context and released after the answer."""
    sent: list[str] = []

    def call() -> held_reports.Report:
        release = held_reports.hold_in_this_context()
        held_reports.report(lambda: sent.append("the call's record"))
        return release

    release = contextvars.copy_context().run(call)
    held_reports.report(lambda: sent.append("another context's"))  # not held
    assert sent == ["another context's"]
    release()
    assert sent == ["another context's", "the call's record"]
    release()  # a second release sends nothing twice
    assert sent == ["another context's", "the call's record"]


def _audit_lines() -> list[dict[str, Any]]:
    audit = Path(os.environ["TOOLHOST_STATE_DIR"]) / "audit.jsonl"
    if not audit.exists():
        return []
    return [json.loads(line) for line in audit.read_text().splitlines()]


async def test_the_answer_is_written_before_the_audit_line(ws: Path) -> None:
    """toolhost mcp's plain call: when its answer is handed to stdout, no audit line of it
    exists yet; right after, it does (the runtime's listeners ran once the answer was out)."""
    calls = Calls(ws, "full", "", "never")
    await calls.warm()
    seen_at_answer: list[list[dict[str, Any]]] = []
    answered = asyncio.Event()

    async def send(data: bytes) -> None:
        seen_at_answer.append(_audit_lines())
        answered.set()

    async def no_serializer() -> Any:
        raise AssertionError("a read's answer needs no SDK")

    fast = FastPath(
        calls,
        "2025-11-25",
        {"clientInfo": {"name": "agent", "version": "1"}, "capabilities": {}},
        send,
        lambda: None,
        no_serializer,
    )
    call = {"name": "read_file", "arguments": {"path": "hello.txt"}}
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    try:
        before = len(_audit_lines())
        assert fast.take(line.encode())
        await asyncio.wait_for(answered.wait(), 60)
        for _ in range(100):  # the task ends right after its answer
            if len(_audit_lines()) > before:
                break
            await asyncio.sleep(0.01)
        after = _audit_lines()
    finally:
        await fast.close()
        await calls.close()
    assert len(seen_at_answer[0]) == before
    assert len(after) == before + 1 and after[-1]["tool"] == "read_file"
    assert after[-1]["outcome"] == "ok"
