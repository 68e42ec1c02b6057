"""Blocking work awaited from the event loop on a daemon thread, for work a closing server
may leave unfinished: anyio's worker threads are joined when the interpreter exits, so one
inside a repack of the checkpoints (minutes after a home folder's first snapshot) kept the
server alive long after its client had closed it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def on_daemon_thread(work: Callable[[], T], name: str) -> T:
    """`work()` on a daemon thread of its own; cancelling the await abandons it."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.done():  # (the awaiting task was cancelled)
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            result, error = work(), None
        except BaseException as exc:  # (handed to the awaiting task)
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await done
