"""The checkpoint around a shell command: a snapshot before it starts, the record when it
ends, exits or is killed (once, even when the call is cancelled); where the kernel names
each writer, what the command's own processes changed (procs/process_writes.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import attrs

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.windows import CommandWindow
from lsp_server.fs.fanotify import FanotifyUnavailable
from lsp_server.procs import process_writes
from lsp_server.procs.process_writes import WriteTracker, Written

if TYPE_CHECKING:
    from lsp_server.runtime.context import ToolContext


@attrs.define
class OpenCommand:
    """A command under way: `close` records what it changed (once, even when cancelled)."""

    checkpoints: Checkpoints
    window: CommandWindow
    closed: bool = False
    changed: Callable[[Path], None] | None = None
    """Told each file the command changed (the session's activity: who changed what)."""
    tracker: WriteTracker | None = None
    """Where the kernel names each writer: it keeps what the command's processes change."""
    expected: list[Path] = attrs.Factory(list)
    pids: list[int] = attrs.Factory(list)

    def claim(self, pid: int) -> None:
        """The command's first process started as `pid`."""
        if self.tracker is not None:
            self.tracker.claim(pid)
            self.pids.append(pid)

    def _take_written(self) -> None:
        """What the command's processes changed, kernel-reported, into its window (None
        when that cannot be said: no process claimed, or events were lost)."""
        if self.tracker is None:
            return
        written = [self.tracker.written(pid) for pid in self.pids]
        for root in self.expected:
            self.tracker.release(root)
        if (
            written
            and all(w.complete for w in written)
            and self.expected == list(self.window.trees)
        ):
            self.window.written = Written(
                {p for w in written for p in w.paths}, {f for w in written for f in w.folders}
            )

    def _unclaim(self) -> None:
        """Recorded: from now on the command's record names its changes, not its claim."""
        if self.tracker is not None:
            for pid in self.pids:
                self.tracker.unclaim(pid)

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with anyio.CancelScope(shield=True):
            try:
                await anyio.to_thread.run_sync(self._take_written)
                made = await self.checkpoints.after_command(self.window)
            finally:
                # Not before: a command recorded meanwhile would find this one's changes
                # neither claimed nor recorded, and keep them as an unknown process's.
                await anyio.to_thread.run_sync(self._unclaim)
        if self.changed is not None:
            roots = list(self.window.trees)
            for record in (r for checkpoint in made for r in checkpoint.files):
                held = [root / record.path for root in roots]
                self.changed(next((p for p in held if p.exists()), held[0]))


async def command_checkpoint(ctx: ToolContext, label: str, needed: bool) -> OpenCommand | None:
    """Snapshot before a shell command whose plan needs a checkpoint (None: no checkpoint;
    policy/command_plan.py). `open.window.notes` then says what failed or was not recorded."""
    if not needed:
        return None
    try:
        checkpoints = ctx.services.get(Checkpoints)
    except LookupError:
        return None
    window = await checkpoints.before_command(ctx.call_id, ctx.session.id, ctx.tool.name, label)
    if window is None:
        return None
    window.agent = ctx.session.agent
    session, what = ctx.session, f"{ctx.tool.name} `{' '.join(label.split())[:40]}`"
    opened = OpenCommand(
        checkpoints,
        window,
        changed=lambda path: session.activity.touched(path, session.id, session.agent, what),
    )
    if checkpoints.config.exact_attribution and window.trees:
        await anyio.to_thread.run_sync(_track, opened)
    return opened


def _track(opened: OpenCommand) -> None:
    """Keep what the command's processes will change in its roots, where the kernel says."""
    tracker = process_writes.shared()
    if tracker is None:
        return
    for root in opened.window.trees:
        try:
            tracker.expect(root)
        except (FanotifyUnavailable, OSError):
            break
        opened.expected.append(root)
    opened.tracker = tracker
