"""How one command runs: sandboxed or not, with or without the network, and whether the
sandbox already prevents everything an approval would guard (then policy need not ask).

Both the policy (before asking) and the shell (when starting the command) use the same
plan, built from the same three inputs, so the approval always describes what will run.
"""

from __future__ import annotations

from typing import Literal

import attrs

SandboxMode = Literal["workspace-write", "read-only", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("workspace-write", "read-only", "off")
# The bash argument: "default" runs confined; "network" keeps the filesystem confined but
# shares the host's network; "off" runs outside the sandbox. Both of the latter ask first.
SandboxRequest = Literal["default", "network", "off"]
SANDBOX_REQUESTS: tuple[SandboxRequest, ...] = ("default", "network", "off")

# Strictness order: a workspace that is not trusted may only move a setting to the right.
_STRICTNESS: dict[SandboxMode, int] = {"off": 0, "workspace-write": 1, "read-only": 2}


def stricter_mode(a: SandboxMode, b: SandboxMode) -> SandboxMode:
    return a if _STRICTNESS[a] >= _STRICTNESS[b] else b


@attrs.frozen
class SandboxPlan:
    mode: SandboxMode
    """The configured mode."""
    sandboxed: bool
    """The command runs inside the sandbox."""
    network: bool
    """The command can reach the network."""
    requested: SandboxRequest
    unavailable: str | None = None
    """Why no sandbox can start here (None when one can, or when the mode is off)."""
    network_configured: bool = False
    """Network access comes from the user's configuration, not from this call."""
    proxy: bool = False
    """No network of its own, but HTTP(S) through toolhost's proxy to the hosts of
    `shell.sandbox_network_allow` (netproxy.py)."""

    @property
    def contained(self) -> bool:
        """The sandbox already prevents what an approval would guard: writes outside the
        workspace and (unless the user configured it) the network."""
        return self.sandboxed and (not self.network or self.network_configured)

    @property
    def escalation(self) -> str | None:
        """What this call asks for beyond the sandbox, for the approval's title; None when
        it asks for nothing beyond it."""
        if self.contained:
            return None
        if self.sandboxed:
            return "with network access"
        if self.requested == "off":
            return "outside the sandbox"
        return None

    def describe(self) -> str:
        """One sentence for approvals, results and doctor."""
        if self.mode == "off":
            return "sandbox off (configured): the command runs with your full permissions"
        if self.unavailable is not None:
            return (
                f"no sandbox ({self.unavailable}): the command runs with your full "
                "permissions, so every command that is not a plain read asks first"
            )
        if not self.sandboxed:
            return (
                'outside the sandbox (the call asked for sandbox: "off"): the command '
                "runs with your full permissions"
            )
        if self.mode == "read-only":
            where = "nothing on disk is writable except a private /tmp"
        else:
            where = (
                "only the workspace (not its .git, .vscode, .toolhost.toml or other files "
                "that run code) and a private /tmp"
            )
        if not self.network and self.proxy:
            net = "network only to the hosts of sandbox_network_allow, through a proxy"
        elif not self.network:
            net = "no network"
        elif self.network_configured:
            net = "network allowed by your configuration"
        else:
            net = 'network allowed for this command (the call asked for sandbox: "network")'
        return f"sandbox {self.mode}: {where}; {net}"


def plan_command(
    mode: SandboxMode,
    unavailable: str | None,
    requested: SandboxRequest = "default",
    network_configured: bool = False,
    proxy: bool = False,
) -> SandboxPlan:
    """The plan for one command. `unavailable`: why no sandbox can start (None: it can);
    `proxy`: a sandboxed command without network reaches the allow list through a proxy."""
    if mode == "off":
        return SandboxPlan(mode, sandboxed=False, network=True, requested=requested)
    if unavailable is not None:
        return SandboxPlan(mode, False, True, requested, unavailable=unavailable)
    if requested == "off":
        return SandboxPlan(mode, sandboxed=False, network=True, requested=requested)
    network = requested == "network" or network_configured
    return SandboxPlan(
        mode,
        sandboxed=True,
        network=network,
        requested=requested,
        network_configured=network_configured and requested != "network",
        proxy=proxy and not network,
    )
