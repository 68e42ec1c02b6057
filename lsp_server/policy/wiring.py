"""How a server (or the CLI) puts the policy together: layered config, the policy service,
the approver behind the runtime's seam, and the audit log."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lsp_server.policy.approver import AuditListener, PolicyApprover
from lsp_server.policy.audit import AuditLog
from lsp_server.policy.command_paths import Places
from lsp_server.policy.layers import LoadedConfig, load_config
from lsp_server.policy.persist import WORKSPACE_CONFIG_NAME
from lsp_server.policy.service import Asker, PolicyService
from lsp_server.policy.trust import TrustStore
from lsp_server.runtime.client import ClientBridge
from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.workspace import Workspace
from lsp_server.state import config_dir, state_dir


def load_layers(
    toolhost_options: Mapping[str, Any] | None,
    roots: Sequence[Path],
    client_section: Mapping[str, Any] | None = None,
) -> LoadedConfig:
    """initializationOptions.toolhost > workspace/configuration > .toolhost.toml > user file."""
    return load_config(
        init_options=toolhost_options,
        client_section=client_section,
        roots=roots,
        user_config=config_dir() / "config.toml",
        trust=TrustStore(state_dir()),
    )


def policy_places(workspace: Workspace, user_config: Path, trust_store: Path) -> Places:
    """The roots, the secret test and the policy files (`.toolhost.toml` of each root,
    the user config, the trust store) as the policy sees them."""
    files = [root / WORKSPACE_CONFIG_NAME for root in workspace.writable_roots()]
    files += [user_config, trust_store]
    return Places(
        roots=tuple(workspace.writable_roots()),
        readable=tuple(workspace.readable_roots),
        is_secret=workspace.is_secret,
        protected=frozenset(Path(os.path.realpath(f)) for f in files),
        protected_dirs=frozenset(
            Path(os.path.realpath(d)) for d in (user_config.parent, trust_store.parent)
        ),
    )


def attach_policy(
    runtime: Runtime,
    client: ClientBridge | None,
    fallback_asker: Asker | None = None,
    problems: list[str] | None = None,
) -> PolicyService:
    """Replace the runtime's default approver with the policy engine and start auditing.
    Rules that do not parse are appended to `problems` (shown to the user) and skipped."""
    trust = TrustStore(state_dir())
    service = PolicyService(
        runtime.config.policy,
        runtime.workspace.writable_roots(),
        trust,
        problems,
        policy_places(runtime.workspace, config_dir() / "config.toml", trust.path),
    )
    runtime.approver = PolicyApprover(service, client, fallback_asker)
    runtime.services.register(PolicyService, service)
    # First listener: the audit line is on disk before didCall goes out.
    runtime.listeners.insert(0, AuditListener(AuditLog(state_dir())))
    return service


def reconfigure(runtime: Runtime, loaded: LoadedConfig) -> None:
    """New settings (workspace/configuration arrived or changed): policy and limits follow;
    workspace roots stay as they were at start."""
    runtime.config.policy = loaded.config.policy
    runtime.config.limits = loaded.config.limits
    service = runtime.services.get(PolicyService)
    service.reconfigure(loaded.config.policy, loaded.problems)
