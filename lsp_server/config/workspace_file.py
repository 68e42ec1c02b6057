"""A root's `.toolhost.toml`: trusted by its exact content, never by where it lies.

The agent can write files in the workspace, so a workspace the editor trusts ("project code
may run") is not enough for the file to loosen policy. Its loosening entries apply only
while its bytes hash to the sha256 this user approved (config/trust.py). Until then (a new
file, or one changed since) only its tightening entries apply: deny and ask rules, mode
default or readOnly, `unattended = "deny"`, the approval timeout, extra secret patterns and
protected paths, a stricter sandbox, and the harmless limits/search/edits sections; its
`allow` rules apply one by one when this user wrote them there with allow_always.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from lsp_server.config.tree import snake_case
from lsp_server.config.trust import TrustStore, content_sha256
from lsp_server.sandbox.placeholders import is_placeholder
from lsp_server.sandbox.plan import SandboxMode

WORKSPACE_CONFIG_NAME = ".toolhost.toml"
MAX_CONFIG_BYTES = 1024 * 1024
"""A larger file is not a config file someone wrote by hand: ignored as invalid."""

# What an unapproved workspace file may set (section -> keys, "*" = the whole section).
_TIGHTENING: dict[str, Any] = {
    "limits": "*",
    "search": "*",
    "edits": "*",
    "policy": {"deny", "ask", "approval_timeout_seconds", "mode", "unattended", "allow"},
    "workspace": {"secret_patterns", "protected_paths"},
    "shell": {"sandbox", "sandbox_network", "env_drop", "sandbox_hide"},
    # acp.mcp_server: off gives the agent fewer tools; on is the default anyway.
    "acp": "*",
    # sessions.isolated: an isolated session writes nothing in the folder until applied.
    "sessions": "*",
}


@attrs.define
class WorkspaceFile:
    """What was read from one root's .toolhost.toml, and whether its content is approved."""

    root: Path
    path: Path
    sha256: str
    trusted: bool
    reason: str
    """"approved by you", "new file, not yet approved", "changed since you approved it" ..."""
    data: dict[str, Any] | None = None
    """The layer that applies (only its tightening entries when not trusted); None: invalid."""
    ignored: list[str] = attrs.Factory(list)
    """Loosening entries that do not apply until the content is approved."""

    @property
    def where(self) -> str:
        return str(self.path)


def normalise(data: Mapping[str, Any]) -> dict[str, Any]:
    """snake_case section and key names so that layers compare and filter alike."""
    out: dict[str, Any] = {}
    for section, value in data.items():
        key = snake_case(section) if isinstance(section, str) else section
        if isinstance(value, Mapping):
            out[key] = {snake_case(k) if isinstance(k, str) else k: v for k, v in value.items()}
        else:
            out[key] = value
    return out


def read_regular_file(path: Path, limit: int = MAX_CONFIG_BYTES) -> bytes | None:
    """The bytes of `path`, None when it does not exist. Only a regular file is read (a FIFO
    the agent put there must not hang the server), at most `limit` bytes; OSError else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_size > limit:
            raise OSError(f"{path} is larger than {limit} bytes")
        return handle.read(limit + 1)


def read_workspace_file(
    root: Path, trust: TrustStore, problems: list[str], notices: list[str]
) -> WorkspaceFile | None:
    """Read, hash and (when its content is not approved) filter a root's .toolhost.toml."""
    path = root / WORKSPACE_CONFIG_NAME
    try:
        raw = read_regular_file(path)
    except OSError as exc:
        problems.append(f"{path}: cannot read ({exc}); ignored")
        return WorkspaceFile(root, path, "", False, f"cannot be read ({exc})")
    if raw is None or (not raw and is_placeholder(path)):
        # The sandbox's empty, marked placeholder holds the name read-only while commands
        # run (sandbox/placeholders.py): no file anyone wrote.
        return None
    sha = content_sha256(raw)
    approved = trust.approved_config(root, path)
    trusted = approved == sha
    if trusted:
        reason = "approved by you (this exact content)"
    elif approved is None:
        reason = "new file, not yet approved"
    else:
        reason = "changed since you approved it"
    found = WorkspaceFile(root, path, sha, trusted, reason)
    try:
        parsed = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        problems.append(f"{path}: invalid TOML ({exc}); ignored")
        found.reason = f"not valid TOML; ignored ({reason})"
        return found
    data = normalise(parsed)
    policy = data.get("policy")
    if isinstance(policy, Mapping) and "trusted_roots" in policy:
        data["policy"] = {k: v for k, v in policy.items() if k != "trusted_roots"}
        notices.append(f"{path}: policy.trusted_roots is read from the user config only")
    if not trusted:
        data = _tightening_only(data, found, trust)
        if found.ignored:
            notices.append(
                f"{path}: {reason}, so these entries are ignored: {', '.join(found.ignored)}. "
                f"To apply them, review the file and run `toolhost trust {path}` (or trust "
                "it in your editor)"
            )
    found.data = data
    return found


def _tightens_sandbox(key: str, value: Any) -> bool:
    if key == "sandbox":
        return value in ("workspace-write", "read-only")
    if key in ("env_drop", "sandbox_hide"):
        return True  # dropping more variables or hiding more files only hides more
    return value is False  # sandbox_network


def _added_patterns_only(patterns: list[Any], ignored: list[str]) -> list[Any]:
    """An unapproved file may add secret patterns, never take one away: a `!pattern`
    (gitignore negation) would un-hide a built-in secret such as `.env`."""
    kept = []
    for pattern in patterns:
        if isinstance(pattern, str) and pattern.lstrip().startswith("!"):
            ignored.append(f"workspace.secret_patterns entry {pattern!r}")
        else:
            kept.append(pattern)
    return kept


def _loosens(section: str, key: str, item: Any) -> bool:
    if section == "policy" and key == "mode":
        return item not in ("default", "readOnly")
    if section == "policy" and key == "unattended":
        return bool(item != "deny")
    if section == "shell":
        return not _tightens_sandbox(key, item)
    return False


def _tightening_only(
    data: dict[str, Any], found: WorkspaceFile, trust: TrustStore
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    ignored = found.ignored
    for section, value in data.items():
        allowed = _TIGHTENING.get(section)
        if allowed is None or not isinstance(value, Mapping):
            ignored.append(f"[{section}]")
            continue
        table: dict[str, Any] = {}
        for key, item in value.items():
            if allowed != "*" and key not in allowed:
                ignored.append(f"{section}.{key}")
            elif _loosens(section, key, item):
                ignored.append(f"{section}.{key} = {item!r}")
            elif section == "workspace" and key == "secret_patterns" and isinstance(item, list):
                table[key] = _added_patterns_only(item, ignored)
            elif section == "policy" and key == "allow" and isinstance(item, list):
                own = [r for r in item if isinstance(r, str) and trust.is_recorded(found.root, r)]
                for rule in item:
                    if rule not in own:
                        ignored.append(f"allow rule {rule!r}")
                table[key] = own
            else:
                table[key] = item
        kept[section] = table
    return kept


def sandbox_tightening(workspace: Mapping[str, Any]) -> tuple[SandboxMode | None, bool]:
    """What an unapproved file asks of the sandbox: a stricter mode (or None), network off.
    These win over every other layer: they only make commands more contained."""
    shell = workspace.get("shell")
    if not isinstance(shell, Mapping):
        return None, False
    mode = shell.get("sandbox")
    network_off = shell.get("sandbox_network") is False
    if mode == "workspace-write" or mode == "read-only":
        return mode, network_off
    return None, network_off
