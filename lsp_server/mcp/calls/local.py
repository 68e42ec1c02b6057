"""The runtime `toolhost mcp` runs calls in when no editor's toolhost serves the root."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

from lsp_server import compose
from lsp_server.checkpoints.early_start import EarlyStart
from lsp_server.config.layers import LoadedConfig
from lsp_server.home.dirs import Dirs
from lsp_server.mcp.calls.elicit import ElicitationAsker
from lsp_server.policy.client_approvals import ClientApprovals
from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.lifecycle import Lifecycle
from lsp_server.runtime.progress import ProgressSender
from lsp_server.tools.session import worktree

log = logging.getLogger(__name__)

Approvals = Literal["auto", "client"]


def build_local_runtime(
    root: Path,
    dirs: Dirs,
    progress: ProgressSender,
    approvals: Approvals | None = None,
    early: EarlyStart | None = None,
) -> tuple[Runtime, Lifecycle]:
    """`approvals`: --approvals as given (None: the config's mcp.approvals); `early`: the
    layers and checkpoints started before this module was imported (tool_calls.py)."""
    isolated = worktree.find(root, dirs.state)  # toolhost mcp --isolate

    def asker_for(loaded: LoadedConfig) -> ElicitationAsker | ClientApprovals:
        if isolated is not None:  # each session's first result tells the agent
            loaded.face_notice = worktree.notice(isolated)
        # The flag beats the config files, but not a lock of the managed file.
        chosen = loaded.command_line("mcp.approvals", approvals, f"--approvals {approvals}")
        if (chosen or loaded.config.mcp.approvals) == "client":
            # The MCP client's own permission step approves; a person's form only for what
            # it may not approve (policy files, leaving the sandbox).
            return ClientApprovals(ElicitationAsker())
        return ElicitationAsker()

    try:
        opened = compose.open_runtime(
            [root], dirs, asker_for=asker_for, progress_sender=progress, early=early
        )
    except BaseException:
        if early is not None:  # (its watchers would outlive the runtime that failed)
            early.close()
        raise
    for problem in opened.problems:
        log.warning("configuration: %s", problem)
    return opened.runtime, opened.lifecycle
