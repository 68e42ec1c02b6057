"""Parsing batches of files in worker processes, so that a native parser fed untrusted
text (a grammar's C scanner can segfault: tree-sitter-bash does on some strings) never
takes the index, or the server, down with it.

A worker that dies costs one file: the batches in flight when the pool broke are parsed
again one file at a time in a new pool, one in flight, so the file that kills a worker on
its own is known; it is recorded as skipped (its stat is kept, so the next sweep does not
retry it until it changes) and the build goes on.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from lsp_server.codeintel import languages
from lsp_server.codeintel.parsing import FileResult, index_batch, unparsable
from lsp_server.procs.priority import lower_priority

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1

Batch = list[tuple[str, str | None]]
"""(relative path, known content hash) of the files one task parses."""
BatchTask = Callable[[str, Batch], list[FileResult]]


def _die_with_parent() -> None:
    """Linux: a killed parent takes its workers along (they would wait on their task pipe
    forever, since their siblings hold its other end)."""
    if sys.platform != "linux":
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _start_worker(niceness: int, base: int, language_names: tuple[str, ...]) -> None:
    """Runs once in each worker: die with the parent, take the priority asked for (the
    parent's main thread's nice value `base`, plus `niceness`: a forkserver started by a
    niced thread would hand its own down), compile the queries it will need."""
    _die_with_parent()
    if sys.platform == "linux":
        with contextlib.suppress(OSError):  # a higher priority than inherited: privileged
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), base)
    if niceness:
        lower_priority(niceness, base)
    for name in language_names:
        languages.tags_query(name)


def _main_thread_nice() -> int:
    """This process's nice value as its main thread has it (a thread may have lowered its
    own: the background build's)."""
    if sys.platform != "linux":
        return 0
    try:
        return os.getpriority(os.PRIO_PROCESS, os.getpid())
    except OSError:
        return 0


def start_method() -> str:
    """`fork` while this process runs one thread (`toolhost index`: the workers start in a
    fraction of the time, with everything imported); `forkserver` once it runs more (the
    server), where a fork can copy a lock another thread holds and deadlock."""
    return "fork" if threading.active_count() == 1 else "forkserver"


def parse_batches(
    root: str, batches: Sequence[Batch], *, workers: int, niceness: int = 0,
    cancelled: threading.Event | None = None, task: BatchTask = index_batch,
    deadline: float | None = None,
) -> Iterator[list[FileResult]]:  # fmt: skip
    """The results of every batch, in the order they finish. `task` is the worker's
    function (tests hand in one that dies on a marked file). Past `deadline`
    (time.monotonic()), or when the caller stops reading, the results end at once: the
    batches in flight finish in their workers unwaited, and no other starts."""
    names = sorted(
        {spec.name for batch in batches for rel, _ in batch
         if (spec := languages.language_for_path(rel)) is not None}
    )  # fmt: skip
    context = multiprocessing.get_context(start_method())
    pending: deque[Batch] = deque(batches)
    suspects: deque[Batch] = deque()
    while pending or suspects:
        broken: list[Batch] = []
        isolating = bool(suspects)
        # Only a few batches are in flight: at interpreter exit concurrent.futures waits
        # for every submitted batch, and a cancelled build should stop soon. While a
        # crash is being pinned down, one file at a time.
        limit = 1 if isolating else 2 * workers
        in_flight: dict[Future[list[FileResult]], Batch] = {}
        pool = ProcessPoolExecutor(
            1 if isolating else workers, mp_context=context, initializer=_start_worker,
            initargs=(niceness, _main_thread_nice(), tuple(names)),
        )  # fmt: skip
        abandoned = False
        try:
            while True:
                if deadline is not None and time.monotonic() > deadline:
                    abandoned = True
                    return
                queue = suspects if isolating else pending
                while queue and len(in_flight) < limit and not broken:
                    if cancelled is not None and cancelled.is_set():
                        return
                    batch = queue.popleft()
                    try:
                        in_flight[pool.submit(task, root, batch)] = batch
                    except BrokenProcessPool:
                        broken.append(batch)
                    except RuntimeError:  # the interpreter is shutting down
                        return
                if not in_flight:
                    break
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                finished, _ = wait(in_flight, timeout=left, return_when=FIRST_COMPLETED)
                if not finished:  # the deadline came first
                    abandoned = True
                    return
                if broken or any(f.exception() is not None for f in finished):
                    finished = set(in_flight)  # the pool is dead: settle every future
                for future in finished:
                    batch = in_flight.pop(future)
                    error = future.exception()
                    if error is None:
                        yield future.result()
                    elif isinstance(error, BrokenProcessPool):
                        broken.append(batch)
                    else:
                        raise error
                if broken:
                    break
        except GeneratorExit:  # the caller stopped reading: its own time limit
            abandoned = True
            raise
        finally:
            pool.shutdown(wait=not abandoned, cancel_futures=abandoned)
        for batch in broken:
            if isolating:  # alone in its pool: this file killed the worker
                log.warning("a parser worker died on %s; the file is not indexed", batch[0][0])
                yield [unparsable(root, batch[0][0])]
            else:
                suspects.extend([entry] for entry in batch)
