"""The sandbox seen from the bash tool: the call's one plan (policy/planner.py, the same
object its approval saw), the launcher it gives, and the network proxy of a sandboxed
command (sandbox_network_allow)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from lsp_server.policy.command_plan import CommandPlan
from lsp_server.policy.planner import CommandPlanner
from lsp_server.runtime.context import ToolContext
from lsp_server.runtime.core import errors
from lsp_server.runtime.core.errors import ToolError
from lsp_server.sandbox import SANDBOX_REQUESTS
from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.sandbox.lifetime import Supervised
from lsp_server.sandbox.netallow import NetworkAllowList, parse_allow_list
from lsp_server.sandbox.netproxy import NetworkProxy
from lsp_server.sandbox.protected import ProtectedPaths, protected_paths
from lsp_server.sandbox.protected_scan import scan_roots
from lsp_server.sandbox.service import SandboxService
from lsp_server.shell.fullscreen import needs_terminal

SANDBOX_PROPERTY = {
    "type": "string",
    "enum": list(SANDBOX_REQUESTS),
    "description": (
        'Where the command runs (default "default"): in the sandbox, where only the '
        "workspace (not .git, .toolhost.toml, .vscode/, .envrc and other files that make "
        "programs run code) and a private /tmp are writable and there "
        'is no network, without asking. "network": the same sandbox with network access '
        '(npm install, pip install, git fetch); "off": outside the sandbox (writes outside '
        "the workspace, git commit). Both ask the user first; use them only after a "
        "command failed because the sandbox blocked it."
    ),
}


@attrs.frozen
class PreparedCommand:
    plan: CommandPlan
    """The call's one plan (the same object its approval saw)."""
    notice: str | None
    """Said once per session when commands run without a sandbox."""
    service: SandboxService
    roots: tuple[Path, ...]
    protected: ProtectedPaths
    hide: tuple[str, ...] = ()
    """`shell.sandbox_hide`: more paths sandboxed commands never see (sandbox/hidden.py)."""

    def launcher(self, proxy: NetworkProxy | None = None) -> BubblewrapLayout | Supervised:
        socket = proxy.socket_path if proxy is not None else None
        return self.service.launcher(
            self.plan.sandbox, self.roots, self.protected, socket, hide=self.hide
        )


def prepare(
    ctx: ToolContext, command: str, arguments: Mapping[str, Any], cwd: Path
) -> PreparedCommand:
    """Refuse what cannot work without a terminal; take the call's plan."""
    reason = needs_terminal(command)
    if reason is not None:
        raise ToolError(
            errors.SHELL_NEEDS_TERMINAL,
            reason,
            "run the batch form named above, or use the file tools to read and edit files",
        )
    planner = ctx.services.get(CommandPlanner)  # compose.py installs it
    plan = planner.plan(command, cwd, arguments, ctx.call_id)
    planner.forget(ctx.call_id)
    service = ctx.services.get(SandboxService)
    return PreparedCommand(
        plan,
        service.notice(ctx.session.id, plan.sandbox),
        service,
        tuple(ctx.workspace.writable_roots()),
        protected_paths(ctx.config.workspace.protected_paths, ctx.config.shell.sandbox_read_only),
        tuple(ctx.config.shell.sandbox_hide),
    )


async def open_network_proxy(ctx: ToolContext, plan: CommandPlan) -> NetworkProxy | None:
    """The allow-list proxy of a sandboxed command without network (None: it gets none)."""
    if not (plan.sandbox.sandboxed and plan.sandbox.proxy):
        return None
    allow = NetworkAllowList(parse_allow_list(ctx.config.shell.sandbox_network_allow))
    return await NetworkProxy(allow).start()


def blocked_notes(proxy: NetworkProxy | None) -> list[str]:
    return [f"[{line}]" for line in proxy.blocked] if proxy is not None else []


# How a write to a name the sandbox holds read-only fails (placeholders.py).
_HELD_ERRORS = ("Read-only file system", "Device or resource busy", "File exists")


def protected_notes(prepared: PreparedCommand, output: str) -> list[str]:
    """A sandboxed command that failed on a protected name: what the file controls and how
    to go on (the model otherwise retries variants that fail the same way)."""
    if not prepared.plan.sandbox.sandboxed or not any(e in output for e in _HELD_ERRORS):
        return []
    notes = []
    for name in prepared.protected.top_level():
        if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", output) is None:
            continue
        entry = prepared.protected.match((name,))
        what = entry.controls if entry is not None else "a protected file"
        notes.append(
            f"[{name} is protected ({what}): the sandbox keeps it read-only whether or not it "
            "exists. Leave it alone unless the user asked for it; then run the command with "
            'sandbox: "off", which asks the user]'
        )
        if len(notes) == 2:
            break
    return notes


BLOCKED_SUFFIX = ".blocked-by-toolhost"


def protected_present(prepared: PreparedCommand) -> frozenset[Path] | None:
    """The protected paths one folder down before a workspace-write sandboxed command
    (None: it does not run there). The sandbox holds names at the top of each root only."""
    sandbox = prepared.plan.sandbox
    if not (sandbox.sandboxed and sandbox.mode == "workspace-write"):
        return None
    return frozenset(scan_roots(prepared.roots, prepared.protected).present)


def block_new_protected(prepared: PreparedCommand, before: frozenset[Path] | None) -> list[str]:
    """Protected names one folder down that the command created (`mkdir sub && cd sub &&
    python3 -c "open(<computed name>, 'w')"`: no placeholder could be there in advance):
    each is renamed aside in its folder, where nothing runs it, and the result says so.
    Deeper ones are not looked for: a scan of the whole tree would cost more than the
    command."""
    if before is None:
        return []
    notes = []
    for path in sorted(scan_roots(prepared.roots, prepared.protected).present):
        if path in before or not os.path.lexists(path):
            continue
        aside = _aside(path)
        try:
            path.rename(aside)  # in its folder; a symlink is renamed, not followed
        except OSError:
            continue
        root = next(r for r in prepared.roots if path.is_relative_to(r))
        entry = prepared.protected.match(path.relative_to(root).parts)
        what = entry.controls if entry is not None else "a protected file"
        notes.append(
            f"[{path.relative_to(root)} was made by the command: {what}. toolhost renamed it "
            f'to {aside.name}, where nothing runs it; to make it, ask the user (sandbox: "off" '
            "asks)]"
        )
    return notes


def _aside(path: Path) -> Path:
    candidate = path.with_name(path.name + BLOCKED_SUFFIX)
    count = 1
    while os.path.lexists(candidate):
        count += 1
        candidate = path.with_name(f"{path.name}{BLOCKED_SUFFIX}-{count}")
    return candidate
