"""A face's answer before the reports of its call: while `held()` is in force, the record
of each call the task finishes (the audit line, didCall, the index's refresh) waits until
the face has written its answer, then goes out, in order. `toolhost mcp` holds them for a
plain call (mcp/fast.py): the audit's write and the listeners are off the answer's path.
A call that outlives the hold (a 2026-07-28 call waiting on a form) reports at once."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

log = logging.getLogger(__name__)

Report = Callable[[], None]


class _Held:
    def __init__(self) -> None:
        self.reports: list[Report] = []
        self.open = True


_HELD: ContextVar[_Held | None] = ContextVar("held_call_reports", default=None)


def report(send: Report) -> None:
    """Send a finished call's record now, or when the hold around it ends."""
    held = _HELD.get()
    if held is None or not held.open:
        send()
    else:
        held.reports.append(send)


@contextmanager
def held() -> Iterator[None]:
    """Hold this task's reports until the block ends (however it ends)."""
    hold = _Held()
    token = _HELD.set(hold)
    try:
        yield
    finally:
        _HELD.reset(token)
        hold.open = False
        for send in hold.reports:
            try:
                send()
            except Exception:
                log.exception("a held call report failed")
