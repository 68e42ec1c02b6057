"""The runtime's modules, loaded in a worker thread from the moment the initialize answer is
written: by the time a client sends `initialized` and its first call (an agent's first tool
call comes seconds later), the composition root, every tool module, the policy engine and
jsonschema are imported and the registry is built, so building the runtime is quick.

The initialize answer itself never waits for this (tests/server/test_startup.py): the thread
starts after the answer has been handed to the transport. Anything on the event loop that
needs these modules waits for the thread first (`wait`, or `join` from a plain handler), so
the loop and the thread never import the same modules at once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class WarmUp:
    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._reported = False
        self.seconds: float | None = None
        """How long the thread took."""
        self.prepared: Any = None
        """What `start`'s `prepare` returned (the protocol's message tables)."""
        self.failure: Exception | None = None
        """What went wrong in the thread; logged from the loop (`report`): no log record
        is forwarded to the client from this thread."""

    @property
    def started(self) -> bool:
        """Whether the thread was started: the initialize answer has been written."""
        return self._thread is not None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def start(self, prepare: Callable[[], Any] = lambda: None) -> None:
        """Start the thread; after the imports it runs `prepare` (the protocol's message
        tables and converter hooks, kept in `prepared` for the loop to adopt)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._load, args=(prepare,), name="toolhost-warm-up", daemon=True
        )
        self._thread.start()

    def _load(self, prepare: Callable[[], Any]) -> None:
        started = time.perf_counter()
        try:
            import lsp_server.compose  # noqa: F401  (the whole house: tools, policy, dispatch)
            from lsp_server.tools.registry import build_registry

            build_registry()  # made once per process: the server's, ready when it asks
            self.prepared = prepare()
        except Exception as exc:  # the loop builds the runtime itself and reports what fails
            self.failure = exc
        finally:
            self.seconds = time.perf_counter() - started
            self._done.set()

    def join(self) -> None:
        """Block until the thread is done (at once when it never started)."""
        if self._thread is not None:
            self._done.wait()
            self.report()

    def report(self) -> None:
        """Log (once, from the caller's thread: the loop's) how the warm-up went."""
        if self._reported or not self._done.is_set():
            return
        self._reported = True
        if self.failure is not None:
            log.warning("warming up the runtime failed: %r", self.failure)
        elif self.seconds is not None:
            log.debug("warm-up: the runtime's modules loaded in %.0f ms", self.seconds * 1000)

    async def wait(self) -> None:
        """Wait on the event loop, without blocking it, until the thread is done."""
        if self._thread is None or self._done.is_set():
            return
        await asyncio.to_thread(self._done.wait)
        self.report()
