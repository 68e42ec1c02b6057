"""The sandbox seen from the bash tool and the policy: one plan per call, from the same
inputs on both sides (the configuration, what this machine can do, the `sandbox`
argument), so the approval describes exactly how the command will run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from lsp_server.config.tree import ShellConfig
from lsp_server.runtime.context import ToolContext
from lsp_server.runtime.core import errors
from lsp_server.runtime.core.errors import ToolError
from lsp_server.sandbox import SANDBOX_REQUESTS, SandboxPlan, SandboxRequest
from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.sandbox.lifetime import Supervised
from lsp_server.sandbox.service import SandboxService
from lsp_server.shell.fullscreen import needs_terminal

SANDBOX_PROPERTY = {
    "type": "string",
    "enum": list(SANDBOX_REQUESTS),
    "description": (
        'Where the command runs (default "default"): in the sandbox, where only the '
        "workspace (not .git or .toolhost.toml) and a private /tmp are writable and there "
        'is no network, without asking. "network": the same sandbox with network access '
        '(npm install, pip install, git fetch); "off": outside the sandbox (writes outside '
        "the workspace, git commit). Both ask the user first; use them only after a "
        "command failed because the sandbox blocked it."
    ),
}


def requested_sandbox(arguments: Mapping[str, Any]) -> SandboxRequest:
    value = arguments.get("sandbox", "default")
    return value if value in SANDBOX_REQUESTS else "default"


def plan_call(
    service: SandboxService, shell: ShellConfig, arguments: Mapping[str, Any]
) -> SandboxPlan:
    return service.plan(shell.sandbox, requested_sandbox(arguments), shell.sandbox_network)


@attrs.frozen
class PreparedCommand:
    plan: SandboxPlan
    launcher: BubblewrapLayout | Supervised
    notice: str | None
    """Said once per session when commands run without a sandbox."""


def prepare(ctx: ToolContext, command: str, arguments: Mapping[str, Any]) -> PreparedCommand:
    """Refuse what cannot work without a terminal; plan the sandbox; build its launcher."""
    reason = needs_terminal(command)
    if reason is not None:
        raise ToolError(
            errors.SHELL_NEEDS_TERMINAL,
            reason,
            "run the batch form named above, or use the file tools to read and edit files",
        )
    service = ctx.services.get(SandboxService)  # compose.py installs it
    shell = ctx.config.shell
    plan = plan_call(service, shell, arguments)
    roots = ctx.workspace.writable_roots()
    launcher = service.launcher(plan, roots, shell.sandbox_read_only)
    return PreparedCommand(plan, launcher, service.notice(ctx.session.id, plan))
