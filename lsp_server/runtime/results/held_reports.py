"""A face's answer before the reports of its call: while `held()` is in force, the record
of each call the task finishes (the audit line, didCall, the index's refresh) waits until
the face has written its answer, then goes out, in order. `toolhost mcp` holds them for a
plain call (mcp/stdio/fast.py), the attach listener for an agent's call, the LSP face for
`toolhost/call` (server/typed_protocol.py): the audit's write and the listeners are off the
answer's path.
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

    def release(self) -> None:
        """Send what was held, in order; later reports go out at once."""
        self.open = False
        reports, self.reports = self.reports, []
        for send in reports:
            try:
                send()
            except Exception:
                log.exception("a held call report failed")


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
        hold.release()


def hold_in_this_context() -> Report:
    """Hold the reports of calls run in the current context, and in the tasks it starts from
    now on, until the returned release is called. For a face that answers after the call's
    task has ended (the LSP face: pygls writes the answer from the task's done callback),
    where a block cannot span the answer. The caller's context must be its own copy (pygls
    runs each message in one)."""
    hold = _Held()
    _HELD.set(hold)
    return hold.release
