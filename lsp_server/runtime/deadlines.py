"""Every running call's deadline (limits.call_timeout_seconds), watched by one timer.

`asyncio.timeout` makes a timer handle for each call and cancels it after: ~6.5 us of a
4 KiB read's ~180 us in process. Here a call's deadline is an entry in a table, and one
timer, armed for the nearest deadline, wakes when it is due: almost never, as calls end in
milliseconds and the limit is minutes. A call past its deadline is cancelled and, as
`asyncio.timeout` does, the cancellation is taken back when it ends, so that it becomes a
timeout and not a cancelled task. Nested calls (use_capability) each keep their own entry.
"""

from __future__ import annotations

import asyncio
import math


class Deadline:
    __slots__ = ("cancelling", "due", "expired", "task")

    def __init__(self, task: asyncio.Task[object], due: float) -> None:
        self.task = task
        self.due = due
        self.expired = False
        self.cancelling = task.cancelling()  # cancellations requested before this call's


class CallDeadlines:
    def __init__(self) -> None:
        self._running: dict[int, Deadline] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_due = math.inf

    def start(self, seconds: float) -> Deadline:
        """The current task's deadline, `seconds` from now."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new loop (tests run a runtime under several)
            self._loop, self._timer, self._timer_due = loop, None, math.inf
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a call's deadline needs a task to cancel")
        deadline = Deadline(task, loop.time() + seconds)
        self._running[id(deadline)] = deadline
        if deadline.due < self._timer_due:
            self._arm(deadline.due)
        return deadline

    def end(self, deadline: Deadline) -> bool:
        """Whether the call ran out of time. The first end of an expired deadline takes
        back its cancellation; True then unless somebody else cancelled the task too."""
        if self._running.pop(id(deadline), None) is None or not deadline.expired:
            return False
        return deadline.task.uncancel() <= deadline.cancelling

    def _arm(self, due: float) -> None:
        assert self._loop is not None
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_at(due, self._expire)
        self._timer_due = due

    def _expire(self) -> None:
        assert self._loop is not None
        self._timer, self._timer_due = None, math.inf
        now = self._loop.time()
        nearest = math.inf
        for deadline in list(self._running.values()):
            if deadline.expired:
                continue
            if deadline.due <= now:
                deadline.expired = True
                deadline.task.cancel()
            else:
                nearest = min(nearest, deadline.due)
        if nearest < math.inf:
            self._arm(nearest)
