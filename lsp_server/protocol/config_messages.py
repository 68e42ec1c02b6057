"""Messages about the configuration the user has not approved yet: a workspace
`.toolhost.toml` whose loosening entries wait for the user's approval of its exact content,
the managed file's state, and the editor's request that records the approval."""

from __future__ import annotations

from typing import Literal

import attrs


@attrs.define
class WorkspaceConfigInfo:
    """One root's `.toolhost.toml`, as `toolhost/status` lists it."""

    path: str
    sha256: str
    """Of the file's bytes: what `toolhost/trustConfig` must name to approve it."""
    state: Literal["trusted", "untrusted"]
    """trusted: the user approved this exact content, every entry applies. untrusted: only
    its tightening entries apply (deny and ask rules, a stricter sandbox ...)."""
    reason: str
    """E.g. "approved by you", "new file, not yet approved", "changed since you approved it"."""
    ignored: list[str] = attrs.Factory(list)
    """The loosening entries ignored until the user approves it (e.g. "shell.sandbox")."""


@attrs.define
class ManagedConfigInfo:
    """The administrator's managed file (/etc/toolhost/managed.toml)."""

    path: str
    state: Literal["absent", "applied", "invalid"]
    """invalid: unreadable or not valid TOML; toolhost then fails closed (mode readOnly,
    every command asks, the sandbox read-only)."""
    message: str = ""
    locked: list[str] = attrs.Factory(list)
    """The settings it sets, which no other layer may change (e.g. "policy.mode")."""


@attrs.define
class ConfigUntrustedParams:
    """Sent once after initialize, and when the file changes, while a root's
    `.toolhost.toml` holds loosening entries the user has not approved. The editor offers to
    show the file and approve it (`toolhost/trustConfig` with this sha256)."""

    path: str
    sha256: str
    reason: str
    ignored: list[str]
    """The entries that do not apply until it is approved, e.g. "policy.mode = 'bypass'"."""


@attrs.define
class TrustConfigParams:
    """The user approved this content of a workspace `.toolhost.toml`. Accepted only on the
    editor's own connection: never from a tool call, an attached MCP agent or an ACP agent."""

    path: str
    sha256: str
    """Of the bytes the user was shown: recorded only when the file still hashes to it."""


@attrs.define
class TrustConfigResult:
    trusted: bool
    message: str
    """What happened: applied now, a restart is needed, or why nothing was recorded (the
    file changed since it was shown, it is not a root's `.toolhost.toml` ...)."""
