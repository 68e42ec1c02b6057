"""The runtime `toolhost mcp` runs calls in when no editor's toolhost serves the root."""

from __future__ import annotations

import logging
from pathlib import Path

from lsp_server.mcp.elicit import ElicitingApprover
from lsp_server.policy.approver import PolicyApprover
from lsp_server.policy.wiring import attach_policy, load_layers
from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.workspace import Workspace
from lsp_server.state import state_dir
from lsp_server.tools import build_registry
from lsp_server.wiring import Lifecycle, install_services

log = logging.getLogger(__name__)


def build_local_runtime(root: Path) -> tuple[Runtime, Lifecycle]:
    roots = [root]
    loaded = load_layers(None, roots)
    config = loaded.config
    runtime = Runtime(
        build_registry(),
        Workspace.from_config(roots, config.workspace),
        config,
        state_dir=state_dir(),
    )
    problems = loaded.problems + loaded.notices
    attach_policy(runtime, None, None, problems)
    assert isinstance(runtime.approver, PolicyApprover)
    runtime.approver = ElicitingApprover(runtime.approver)
    for problem in problems:
        log.warning("configuration: %s", problem)
    lifecycle = Lifecycle()
    install_services(runtime, lifecycle)
    return runtime, lifecycle
