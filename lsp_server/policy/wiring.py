"""How a server (or the CLI) puts the policy together: layered config, the policy service,
the approver behind the runtime's seam, and the audit log."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lsp_server.policy.approver import AuditListener, PolicyApprover
from lsp_server.policy.audit import AuditLog
from lsp_server.policy.layers import LoadedConfig, load_config
from lsp_server.policy.service import Asker, PolicyService
from lsp_server.policy.trust import TrustStore
from lsp_server.runtime.client import ClientBridge
from lsp_server.runtime.dispatch import Runtime
from lsp_server.state import config_dir, state_dir
from lsp_server.tools.sandboxing import plan_call, sandbox_service


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


def attach_policy(
    runtime: Runtime,
    client: ClientBridge | None,
    fallback_asker: Asker | None = None,
    problems: list[str] | None = None,
) -> PolicyService:
    """Replace the runtime's default approver with the policy engine and start auditing.
    Rules that do not parse are appended to `problems` (shown to the user) and skipped."""
    service = PolicyService(
        runtime.config.policy,
        runtime.workspace.writable_roots(),
        TrustStore(state_dir()),
        problems,
    )
    sandbox = sandbox_service(runtime.services)
    service.sandbox_planner = lambda arguments: plan_call(sandbox, runtime.config.shell, arguments)
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
