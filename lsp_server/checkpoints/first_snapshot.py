"""The first snapshot of each root in a process: the root measured against the budget
(watching/root_budget.py), then snapshotted, off the command's path where that may take long.

In a git work tree the first snapshot is seeded from the user's index (shadow/seed.py) and
costs what `git status` costs: the command waits for it. Anywhere else it stores every
file once, so it runs in a thread of its own at low priority (nice 10, idle I/O class),
and commands wait for it at most FIRST_WAIT seconds from its start, all together (longer
only while the root has turned out small: a loaded machine, not a large root): the first
command waits up to FIRST_WAIT, one sent later while it still runs only what is left of
that. A command that runs before it is done has no checkpoint, and its result says so and
what that means for its revert; the commands after it have one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from lsp_server.checkpoints.watching.root_budget import Tally
from lsp_server.procs.priority import IO_IDLE, lower_priority

log = logging.getLogger(__name__)

FIRST_WAIT = 1.5
"""Seconds the commands wait for a first snapshot outside git, counted from its start (a
command's own work comes on top: its answer stays within 2 s)."""
SMALL_ROOT = 10_000
"""A root measured at fewer files is waited for as long as it takes (the machine is busy)."""
LAST_WAIT = 1.9
"""Seconds from the start after which no command waits for a root still being measured."""

STAYS_OFF = (
    "until toolhost restarts no command here has a checkpoint, so a revert cannot undo what "
    "commands change (the file tools' edits keep theirs)"
)
"""What a first snapshot that could not be taken (over the budget ...) means, said once."""

Taken = tuple[str, dict[str, list[int | str]]]
"""A snapshot: its tree and the ignored files left out (command_snapshots.py)."""
Outcome = Taken | str | None
"""What the first snapshot gave: a snapshot, why there is none, or None (the root went)."""


@attrs.define
class Job:
    tally: Tally
    background: bool
    started: float = attrs.Factory(time.monotonic)
    done: threading.Event = attrs.Factory(threading.Event)
    outcome: Outcome = None
    claimed: bool = False
    said: bool = False


class FirstSnapshots:
    """One first snapshot per root; `ready` tells a command whether it may go on."""

    def __init__(
        self,
        take: Callable[[Path, Tally], Outcome],
        tally_of: Callable[[Path], Tally],
        background: Callable[[Path], bool],
    ) -> None:
        """`take`: measure into the tally and snapshot (blocking, under the root's locks);
        `background`: whether the root's first snapshot may take long (no seed)."""
        self._take = take
        self._tally_of = tally_of
        self._background = background
        self._jobs: dict[Path, Job] = {}
        self._lock = threading.Lock()

    def job(self, root: Path) -> Job | None:
        with self._lock:
            return self._jobs.get(root)

    def ready(self, root: Path) -> tuple[bool, Outcome]:
        """(True, the first snapshot when this command is the one it was taken for, else
        None: take your own) or (False, a note for the result, or None: say nothing)."""
        with self._lock:
            job = self._jobs.get(root)
            starter = job is None
            if job is None:
                job = self._jobs[root] = Job(self._tally_of(root), self._background(root))
        if starter:
            if job.background:
                threading.Thread(target=self._run, args=(root, job), daemon=True).start()
            else:
                self._run(root, job)
        left = max(0.0, job.started + FIRST_WAIT - time.monotonic())
        if not job.done.wait(left if job.background else None):
            self._wait_if_small(job)
        if not job.done.is_set():
            return False, still_running(job.tally.files)
        if isinstance(job.outcome, str):
            if job.said:
                return False, None
            job.said = True
            return False, f"{job.outcome}; {STAYS_OFF}"
        if starter and not job.claimed and job.outcome is not None:
            job.claimed = True
            return True, job.outcome
        return True, None

    @staticmethod
    def _wait_if_small(job: Job) -> None:
        """Past FIRST_WAIT, wait on while the root has turned out small: measured (its count
        stopped growing) at fewer than SMALL_ROOT files, its snapshot under way on a busy
        machine. A count still growing is a large root being measured: no wait past
        LAST_WAIT from the start. Growing means seen growing at two looks in a row, the
        measure not ended: a measure that stalled (its thread starved, a lock waited for)
        and then counted a small root at once grew only once, and is small."""
        seen, grew = -1, True
        while job.tally.files < SMALL_ROOT and not job.done.is_set():
            files = job.tally.files
            growing = files != seen and grew and not job.tally.measured
            seen, grew = files, files != seen
            left = job.started + LAST_WAIT - time.monotonic()
            if growing and left <= 0:
                return
            job.done.wait(min(0.25, left) if growing else 0.25)

    def _run(self, root: Path, job: Job) -> None:
        if job.background:
            lower_priority(10, base=0, io=IO_IDLE)  # the git processes it starts too
        try:
            job.outcome = self._take(root, job.tally)
        except Exception:
            log.exception("the first snapshot of %s failed", root)
            with self._lock:  # the next command tries again
                self._jobs.pop(root, None)
        finally:
            job.done.set()


def still_running(files: int) -> str:
    """The note of a command that ran before its root's first snapshot was done."""
    return (
        f"the first snapshot of this root is still being taken ({files:,} files counted "
        "so far, at low priority): this command has no checkpoint, so a revert cannot undo "
        "what it changes (toolhost revert finds none; its changes become part of the state "
        "later checkpoints start from); commands after the snapshot is done have "
        "checkpoints, unless the root turns out over the budget (their result then says so)"
    )
