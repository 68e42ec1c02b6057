"""The checkpoint around a shell command: a snapshot before it starts, the record when it
ends, exits or is killed (once, even when the call is cancelled)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import attrs

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.windows import CommandWindow

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

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with anyio.CancelScope(shield=True):
            made = await self.checkpoints.after_command(self.window)
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
    return OpenCommand(
        checkpoints,
        window,
        changed=lambda path: session.activity.touched(path, session.id, session.agent, what),
    )
