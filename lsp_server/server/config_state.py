"""The LSP face's configuration: the layers it applies, what toolhost/status says of them,
the toolhost/configUntrusted notices, and toolhost/trustConfig (the editor's "Trust").

toolhost/trustConfig is served on the editor's own LSP connection only: the attach socket
(`toolhost mcp` beside the editor) forwards tool calls and nothing else, and no tool call
can send a toolhost/* request (attach/listener.py, tests/mcp/test_config_trust.py).

The server makes its ConfigState before it answers initialize, so this module imports only
what that answer already needs; the config layers load once the answer is out (the
start-up rule, docs/ARCHITECTURE.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from lsp_server.core.uris import uri_to_path
from lsp_server.home.dirs import Dirs

if TYPE_CHECKING:
    from lsp_server.config.layers import LoadedConfig
    from lsp_server.protocol import ConfigUntrustedParams, TrustConfigParams, TrustConfigResult
    from lsp_server.runtime.dispatch import Runtime

# What Runtime.reconfigure applies to a running server; other changes need a restart.
LIVE_SECTIONS = ("policy", "limits")


@attrs.define
class ConfigState:
    """The configuration a running `toolhost serve` applies and what its editor was told of
    it: the layers last loaded and the settings they were loaded with, the problems and
    notices shown, the unapproved workspace files announced."""

    dirs: Dirs
    notify_untrusted: Callable[[ConfigUntrustedParams], None]
    show_warning: Callable[[str], None]
    init_options: dict[str, Any] = attrs.Factory(dict)
    """initializationOptions.toolhost."""
    client_section: dict[str, Any] | None = None
    """The editor's last workspace/configuration answer."""
    loaded: LoadedConfig | None = None
    problems: list[str] = attrs.Factory(list)
    notices: list[str] = attrs.Factory(list)
    announced: set[str] = attrs.Factory(set)
    """The content hashes of the unapproved files the editor was told of."""

    def load(self, roots: Sequence[Path]) -> LoadedConfig:
        """The layers for `roots` with the settings last given (blocking: file reads)."""
        from lsp_server.config.layers import load_layers

        return load_layers(self.init_options, list(roots), self.dirs, self.client_section)

    def settle(self, loaded: LoadedConfig) -> None:
        """Take the first layers (before any runtime applies them)."""
        self.problems += loaded.problems
        self.notices = loaded.notices
        self.loaded = loaded

    def status_fields(self) -> dict[str, Any]:
        from lsp_server.config.overview import status_fields

        return status_fields(self.loaded)

    def send_untrusted(self) -> None:
        """Tell the editor about each unapproved file, once per content (a reload after an
        unrelated settings change does not repeat it)."""
        from lsp_server.config.overview import untrusted_notices

        for notice in untrusted_notices(self.loaded):
            if notice.sha256 not in self.announced:
                self.announced.add(notice.sha256)
                self.notify_untrusted(notice)

    def apply(self, runtime: Runtime, loaded: LoadedConfig) -> None:
        """Policy and limits apply to every later call; a new problem or notice is shown
        once; a workspace config still waiting for approval is announced."""
        from lsp_server.config.layers import tighten_running_sandbox

        runtime.reconfigure(loaded.config, loaded.problems)
        tighten_running_sandbox(runtime.config.shell, loaded.config.shell)
        self.loaded = loaded
        self.send_untrusted()
        for problem in loaded.problems + loaded.notices:
            if problem not in self.problems and problem not in self.notices:
                self.show_warning(f"toolhost: {problem}")
        self.problems[:] = loaded.problems
        self.notices[:] = loaded.notices

    async def reload(self, runtime: Runtime, client_section: dict[str, Any] | None = None) -> None:
        """Read the layers again (with the editor's new settings, when given) and apply
        them."""
        if client_section is not None:
            self.client_section = client_section
        loaded = await asyncio.to_thread(self.load, runtime.workspace.roots)
        self.apply(runtime, loaded)

    async def trust(self, runtime: Runtime, params: TrustConfigParams) -> TrustConfigResult:
        """toolhost/trustConfig: approve the file's content as the editor showed it."""
        from lsp_server.config.approval import approve_config
        from lsp_server.config.trust import TrustStore
        from lsp_server.protocol import TrustConfigResult

        roots = list(runtime.workspace.roots)
        path = uri_to_path(params.path) if params.path.startswith("file:") else None
        path = path or Path(params.path)
        if not path.is_absolute() and roots:
            path = roots[0] / path
        trust = TrustStore(self.dirs.state)
        approval = await asyncio.to_thread(approve_config, path, params.sha256, roots, trust)
        if not approval.trusted:
            return TrustConfigResult(trusted=False, message=approval.message)
        loaded = await asyncio.to_thread(self.load, roots)
        restart = _restart_needed(runtime, loaded)
        self.apply(runtime, loaded)
        message = f"{approval.message}; its settings apply now"
        if restart:
            message = (
                f"{approval.message}; its policy applies now, its {', '.join(restart)} settings "
                "after a restart of the toolhost server"
            )
        return TrustConfigResult(trusted=True, message=message)


def _restart_needed(runtime: Runtime, loaded: LoadedConfig) -> list[str]:
    current = runtime.config
    return [
        section
        for section in attrs.fields_dict(type(current))
        if section not in LIVE_SECTIONS
        and getattr(current, section) != getattr(loaded.config, section)
    ]
