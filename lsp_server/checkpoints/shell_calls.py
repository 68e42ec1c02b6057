"""The checkpoint around a shell command: a snapshot before it starts, the record when it
ends, exits or is killed (once, even when the call is cancelled)."""

from __future__ import annotations

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

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with anyio.CancelScope(shield=True):
            await self.checkpoints.after_command(self.window)


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
    if window is not None:
        window.agent = ctx.session.agent
    return OpenCommand(checkpoints, window) if window is not None else None
