"""The LSP face's view of its configuration: what toolhost/status says about the layers, the
toolhost/configUntrusted notices, and toolhost/trustConfig (the editor's "Trust" button).

toolhost/trustConfig is served on the editor's own LSP connection only: the attach socket
(`toolhost mcp` beside the editor) forwards tool calls and nothing else, and no tool call
can send a toolhost/* request (attach/listener.py, tests/mcp/test_config_trust.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from lsprotocol import types

from lsp_server.config import overview
from lsp_server.config.approval import approve_config, config_root
from lsp_server.config.layers import LoadedConfig, load_layers
from lsp_server.config.tree import ShellConfig
from lsp_server.config.trust import TrustStore
from lsp_server.core.uris import uri_to_path
from lsp_server.protocol import ConfigUntrustedParams, TrustConfigParams, TrustConfigResult
from lsp_server.sandbox import stricter_mode
from lsp_server.sandbox.placeholders import is_placeholder

if TYPE_CHECKING:
    from lsprotocol.types import DidChangeWatchedFilesParams

    from lsp_server.server.server import ToolhostServer

# What Runtime.reconfigure applies to a running server; other changes need a restart.
LIVE_SECTIONS = ("policy", "limits")


def status_fields(loaded: LoadedConfig | None) -> dict[str, Any]:
    """policySources, configLayers, workspaceConfig and managedConfig for toolhost/status."""
    if loaded is None:
        return {"policy_sources": {}}
    return {
        "policy_sources": dict(loaded.policy_sources),
        "config_layers": list(loaded.sources),
        "workspace_config": overview.workspace_infos(loaded),
        "managed_config": overview.managed_info(loaded),
    }


def untrusted_notices(loaded: LoadedConfig | None) -> list[ConfigUntrustedParams]:
    """One toolhost/configUntrusted per root file whose loosening entries wait for approval."""
    if loaded is None:
        return []
    return [
        ConfigUntrustedParams(
            path=str(found.path), sha256=found.sha256, reason=found.reason, ignored=found.ignored
        )
        for found in loaded.workspace_files
        if not found.trusted and found.ignored and found.sha256
    ]


def send_untrusted(server: ToolhostServer, loaded: LoadedConfig | None) -> None:
    """Tell the editor about each unapproved file, once per content (a reload after an
    unrelated settings change does not repeat it)."""
    from lsp_server.wire import method_names

    for notice in untrusted_notices(loaded):
        if notice.sha256 in server.announced_configs:
            continue
        server.announced_configs.add(notice.sha256)
        server.protocol.notify(method_names.TOOLHOST_CONFIG_UNTRUSTED, notice)


def names_workspace_config(roots: Sequence[Path], params: DidChangeWatchedFilesParams) -> bool:
    """Whether a watched-files notice names a root's .toolhost.toml."""
    for change in params.changes:
        path = uri_to_path(change.uri)
        # The sandbox's placeholder appearing while a command runs is no config change.
        if path is not None and config_root(path, roots) is not None and not is_placeholder(path):
            return True
    return False


async def reload_config(server: ToolhostServer) -> None:
    """Read the layers again with the client's last settings, and apply them."""
    roots = list(server.ensure_runtime().workspace.roots)
    loaded = await asyncio.to_thread(
        load_layers, server.init_options, roots, server.dirs, server.client_section
    )
    apply_loaded(server, loaded)


def apply_loaded(server: ToolhostServer, loaded: LoadedConfig) -> None:
    """Policy and limits apply to every later call; a new problem or notice is shown once;
    a workspace config still waiting for approval is announced."""
    runtime = server.ensure_runtime()
    runtime.reconfigure(loaded.config, loaded.problems)
    tighten_running_sandbox(runtime.config.shell, loaded.config.shell)
    server.loaded_config = loaded
    send_untrusted(server, loaded)
    for problem in loaded.problems + loaded.notices:
        if problem not in server.config_problems and problem not in server.config_notices:
            server.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning, message=f"toolhost: {problem}"
                )
            )
    server.config_problems[:] = loaded.problems
    server.config_notices[:] = loaded.notices


def tighten_running_sandbox(running: ShellConfig, loaded: ShellConfig) -> None:
    """The shell section is not reconfigured live (a looser sandbox waits for a restart),
    but a stricter one applies at once: an approved file with `sandbox = "off"` that the
    agent rewrites must not keep the sandbox off until the next start. Commands read these
    fields from the runtime's config when each is planned (policy/planner.py)."""
    running.sandbox = stricter_mode(running.sandbox, loaded.sandbox)
    if running.sandbox_network and not loaded.sandbox_network:
        running.sandbox_network = False
    kept = [host for host in running.sandbox_network_allow if host in loaded.sandbox_network_allow]
    if kept != running.sandbox_network_allow:
        running.sandbox_network_allow = kept


def _restart_needed(server: ToolhostServer, loaded: LoadedConfig) -> list[str]:
    runtime = server.runtime
    if runtime is None:
        return []
    current = runtime.config
    return [
        section
        for section in attrs.fields_dict(type(current))
        if section not in LIVE_SECTIONS
        and getattr(current, section) != getattr(loaded.config, section)
    ]


async def trust_config(server: ToolhostServer, params: TrustConfigParams) -> TrustConfigResult:
    runtime = server.runtime if server.runtime is not None else await server.runtime_ready()
    roots = list(runtime.workspace.roots)
    path = uri_to_path(params.path) if params.path.startswith("file:") else None
    path = path or Path(params.path)
    if not path.is_absolute() and roots:
        path = roots[0] / path
    trust = TrustStore(server.dirs.state)
    approval = await asyncio.to_thread(approve_config, path, params.sha256, roots, trust)
    if not approval.trusted:
        return TrustConfigResult(trusted=False, message=approval.message)
    loaded = await asyncio.to_thread(
        load_layers, server.init_options, roots, server.dirs, server.client_section
    )
    restart = _restart_needed(server, loaded)
    apply_loaded(server, loaded)
    message = f"{approval.message}; its settings apply now"
    if restart:
        message = (
            f"{approval.message}; its policy applies now, its {', '.join(restart)} settings "
            "after a restart of the toolhost server"
        )
    return TrustConfigResult(trusted=True, message=message)
