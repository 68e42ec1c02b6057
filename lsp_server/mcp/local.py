"""The runtime `toolhost mcp` runs calls in when no editor's toolhost serves the root."""

from __future__ import annotations

import logging
from pathlib import Path

from lsp_server import compose
from lsp_server.config.layers import load_layers
from lsp_server.dirs import Dirs
from lsp_server.mcp.elicit import ElicitationAsker
from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.progress import ProgressSender

log = logging.getLogger(__name__)


def build_local_runtime(
    root: Path, dirs: Dirs, progress: ProgressSender
) -> tuple[Runtime, compose.Lifecycle]:
    roots = [root]
    loaded = load_layers(None, roots, dirs)
    problems = loaded.problems + loaded.notices
    runtime, lifecycle = compose.build_runtime(
        roots,
        loaded.config,
        dirs=dirs,
        asker=ElicitationAsker(),
        problems=problems,
        progress_sender=progress,
    )
    for problem in problems:
        log.warning("configuration: %s", problem)
    return runtime, lifecycle
