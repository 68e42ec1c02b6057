"""The sandbox seen from the bash tool: the call's one plan (policy/planner.py, the same
object its approval saw), the launcher it gives, and the network proxy of a sandboxed
command (sandbox_network_allow)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.watching.root_watchers import RootWatchers
from lsp_server.core import errors
from lsp_server.core.errors import ToolError
from lsp_server.policy.command_plan import CommandPlan
from lsp_server.policy.planner import CommandPlanner
from lsp_server.policy.protected_writes import creates_repository
from lsp_server.runtime.context import ToolContext
from lsp_server.sandbox import SANDBOX_REQUESTS
from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.sandbox.lifetime import Supervised
from lsp_server.sandbox.netallow import NetworkAllowList, parse_allow_list
from lsp_server.sandbox.netproxy import NetworkProxy
from lsp_server.sandbox.protected import ProtectedPaths, protected_paths
from lsp_server.sandbox.protected_scan import scan_roots
from lsp_server.sandbox.service import SandboxService
from lsp_server.shell.fullscreen import needs_terminal
from lsp_server.tools.shell import fresh_repository
from lsp_server.tools.shell.protected_made import (
    ProtectedBefore,
    aside,
    made_protected,
    open_windows,
)

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
    watchers: RootWatchers | None = None
    """The checkpoint watchers: where one runs, what the command made at any depth."""

    def launcher(self, proxy: NetworkProxy | None = None) -> BubblewrapLayout | Supervised:
        socket = proxy.socket_path if proxy is not None else None
        return self.service.launcher(
            self.plan.sandbox, self.roots, self.protected, socket, hide=self.hide
        )


def prepare(
    ctx: ToolContext, command: str, arguments: Mapping[str, Any], cwd: Path
) -> PreparedCommand:
    """Refuse what cannot work without a terminal (unless it gets one); take the call's plan."""
    reason = None if arguments.get("terminal") else needs_terminal(command)
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
        _watchers(ctx),
    )


def _watchers(ctx: ToolContext) -> RootWatchers | None:
    try:
        return ctx.services.get(Checkpoints).watchers
    except LookupError:
        return None


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
    if not prepared.plan.sandbox.sandboxed:
        return []
    # Only the lines that say a write failed: a listing (ls, git status) naming other
    # protected files beside the failure is no reason to explain them.
    failed = "\n".join(line for line in output.splitlines() if any(e in line for e in _HELD_ERRORS))
    if not failed:
        return []
    notes = []
    for name in prepared.protected.top_level():
        if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", failed) is None:
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


MAX_NOTES = 5
"""Protected names renamed aside that a result names one by one."""


def protected_present(prepared: PreparedCommand) -> ProtectedBefore | None:
    """Before a workspace-write sandboxed command (None: it does not run there): the
    protected paths one folder down, and a window on each watched root's new names (the
    sandbox holds names at the top of each root only; protected_made.py)."""
    sandbox = prepared.plan.sandbox
    if not (sandbox.sandboxed and sandbox.mode == "workspace-write"):
        return None
    present = frozenset(scan_roots(prepared.roots, prepared.protected).present)
    return ProtectedBefore(present, open_windows(prepared.roots, prepared.watchers))


def block_new_protected(prepared: PreparedCommand, before: ProtectedBefore | None) -> list[str]:
    """Protected names below the top that the command made (`mkdir -p a/b/c && cd a/b/c &&
    python3 -c "open(<computed name>, 'w')"`: no placeholder could be there in advance):
    each is renamed aside in its folder, where nothing runs it, and the result says so. At
    any depth where the root's checkpoint watcher runs, else one folder down only."""
    if before is None:
        return []
    notes: list[str] = []
    # Only a command the user allowed to make a repository may leave one (git init and
    # git clone always ask); a .git made any other way, e.g. by a computed name, goes.
    approved = any(creates_repository(s.words) for s in prepared.plan.view.segments)
    for path in made_protected(prepared.roots, prepared.protected, before):
        root = next(r for r in prepared.roots if path.is_relative_to(r))
        if approved and _kept_repository(path, root):
            continue
        moved = aside(path)
        try:
            path.rename(moved)  # in its folder; a symlink is renamed, not followed
        except OSError:
            continue
        entry = prepared.protected.match(path.relative_to(root).parts)
        what = entry.controls if entry is not None else "a protected file"
        if len(notes) == MAX_NOTES:  # a package manager may unpack many (`.vscode/` in one)
            notes.append("[and more protected names the command made, renamed aside too]")
        if len(notes) > MAX_NOTES:
            continue
        notes.append(
            f"[{path.relative_to(root)} was made by the command: {what}. toolhost renamed it "
            f'to {moved.name}, where nothing runs it; to make it, ask the user (sandbox: "off" '
            "asks)]"
        )
    return notes


def _kept_repository(path: Path, root: Path) -> bool:
    """A repository an allowed `git clone` / `git init` made one folder down: kept when
    nothing in its `.git` runs a program (fresh_repository.py); there, the next commands
    get it read-only, as every protected name one folder down. Deeper ones are not held by
    the sandbox, so they are renamed aside still."""
    return (
        path.name == ".git"
        and len(path.relative_to(root).parts) == 2
        and fresh_repository.harmless(path)
    )
