"""ToolhostServer: the pygls language server that exposes the tool runtime, and its state.
Its handlers are server/handlers.py; the runtime comes from compose.py; the editor side of
it is server/editor.py, the wire is server/transport.py."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer

from lsp_server import __version__
from lsp_server.config.broad_roots import BroadRoot
from lsp_server.core.client import ClientFeatures
from lsp_server.core.uris import uri_to_path
from lsp_server.home.dirs import Dirs
from lsp_server.runtime.lifecycle import Lifecycle
from lsp_server.server import capability_cache, root_refusal, wire_errors
from lsp_server.server.config_state import ConfigState
from lsp_server.server.isolated_sessions import IsolatedSessions
from lsp_server.server.typed_protocol import ToolhostProtocol, lazy_toolhost_converter
from lsp_server.server.warm_up import WarmUp
from lsp_server.wire import method_names

# The rest of the house (config layers, the protocol's message types, the attach listener,
# the editor bridge) is imported after the initialize answer: by `settle` and the handlers.
if TYPE_CHECKING:
    from lsp_server.attach.listener import AttachListener
    from lsp_server.checkpoints.recorder import Checkpoints
    from lsp_server.compose import EditorLink
    from lsp_server.config.tree import Config
    from lsp_server.core.contract import Registry
    from lsp_server.protocol import (
        ConfigUntrustedParams,
        DidCallParams,
        StatusParams,
        StatusResult,
        ToolsParams,
        ToolsResult,
    )
    from lsp_server.runtime.buffers.documents import EditorDocuments
    from lsp_server.runtime.dispatch import Runtime

log = logging.getLogger(__name__)


class ToolhostServer(LanguageServer):
    def __init__(
        self,
        root_override: Path | None = None,
        tcp_token: str | None = None,
        dirs: Dirs | None = None,
    ) -> None:
        super().__init__(
            "toolhost",
            __version__,
            protocol_cls=ToolhostProtocol,
            converter_factory=lazy_toolhost_converter,
        )
        self.root_override = root_override
        self.tcp_token = tcp_token
        self.dirs = dirs or Dirs.from_environment()
        self._config: Config | None = None
        self.config_state = ConfigState(
            self.dirs, notify_untrusted=self._notify_untrusted, show_warning=self._show_warning
        )
        self.supports_configuration = False
        # Calls wait until the client's workspace/configuration answer is in (or failed), so
        # that no call runs under a policy that is about to change.
        self.settings_ready = asyncio.Event()
        self.features = ClientFeatures()
        self.runtime: Runtime | None = None
        self.documents: EditorDocuments | None = None
        self.lifecycle = Lifecycle()
        self.isolated = IsolatedSessions(self)
        self._roots_at_start: list[Path] | None = None
        self.refused_root: BroadRoot | None = None
        """The root is no workspace (a home folder, `/` ...): no runtime, every call refused."""
        self._initialize_params: types.InitializeParams | None = None
        self._attach_listener: AttachListener | None = None
        # The runtime's modules load in a thread once the initialize answer is out.
        self.warm_up = WarmUp()

    @functools.cached_property
    def registry(self) -> Registry:
        self.warm_up.join()  # never import the tool modules beside the warm-up thread
        from lsp_server.tools.registry import build_registry  # every tool module (warmed)

        return build_registry()

    def toolhost_types(self) -> None:
        """Load the toolhost/* message tables into the protocol, and make their hooks."""
        cast("ToolhostProtocol", self.protocol).make_message_hooks()

    @property
    def config(self) -> Config:
        """The settings as loaded at start (then from the client's workspace/configuration)."""
        self.settle()
        if self._config is None:
            from lsp_server.config.tree import Config

            self._config = Config()
        return self._config

    @property
    def attach_listener(self) -> AttachListener:
        """MCP agents beside the editor (`toolhost mcp`) attach to this runtime over a
        private socket; started once the editor is initialized."""
        if self._attach_listener is None:
            from lsp_server.attach.listener import AttachListener

            self._attach_listener = AttachListener(
                self.dirs.attach_folder, self.wait_for_settings, self.attach_status
            )
        return self._attach_listener

    def advertised(self) -> dict[str, Any]:
        """capabilities.experimental.toolhost: from the cache when the sources are the same
        as when it was computed, so the answer does not wait for the tool modules."""
        key = capability_cache.source_key()
        cached = capability_cache.load(self.dirs.state, key)
        if cached is not None:
            return cached
        from lsp_server.core.contract import SURFACES
        from lsp_server.protocol import PROTOCOL_VERSION

        capability = {
            "protocolVersion": PROTOCOL_VERSION,
            "surfaceHash": self.registry.hash("core"),
            "fullHash": self.registry.hash("full"),
            "surfaces": list(SURFACES),
            "toolCount": len(self.registry.surface("full")),
        }
        capability_cache.store(self.dirs.state, key, capability)
        return capability

    # -- set-up ---------------------------------------------------------------------

    def setup(self, params: types.InitializeParams) -> None:
        options = params.initialization_options or {}
        toolhost_options = options.get("toolhost", {}) if isinstance(options, dict) else {}
        if not isinstance(toolhost_options, dict):
            # e.g. an empty Lua table, which Neovim encodes as []: never refuse to start.
            if toolhost_options:
                self.config_state.problems.append(
                    "initializationOptions.toolhost should be an object"
                )
            toolhost_options = {}
        if self.tcp_token is not None and not secrets.compare_digest(
            str(toolhost_options.get("token", "")), self.tcp_token
        ):
            asyncio.get_running_loop().call_later(0.1, self._drop_connection)
            raise JsonRpcInvalidRequest("toolhost: wrong or missing token for a TCP connection")
        self.config_state.init_options = toolhost_options
        roots = self._roots(params)
        # Decided before anything reads the roots (broad_roots.py); said at `initialized`.
        self.refused_root = root_refusal.check(roots, self.dirs, self.config_state.problems)
        workspace_caps = params.capabilities.workspace
        self.supports_configuration = bool(workspace_caps and workspace_caps.configuration)
        if not self.supports_configuration:
            self.settings_ready.set()
        self._roots_at_start = roots
        self._initialize_params = params

    def settle(self) -> None:
        """Read initialize's config layers and client features (once the answer is out)."""
        params, self._initialize_params = self._initialize_params, None
        if params is None or self._roots_at_start is None:
            return
        from lsp_server.server.editor import client_features

        loaded = self.config_state.load(self._roots_at_start)
        self._config = loaded.config
        self.config_state.settle(loaded)
        self.features = client_features(params.capabilities)
        self.features.name = params.client_info.name if params.client_info else None
        for problem in self.config_state.problems:
            log.warning("configuration: %s", problem)

    def after_initialize_answer(self) -> None:
        """Run on the loop once the initialize answer has been handed to the writer."""
        self.settle()
        self.warm_up.start(cast("ToolhostProtocol", self.protocol).prepare_types)

    def ensure_runtime(self) -> Runtime:
        """The runtime, built on first need after initialize (at `initialized`, or by an
        earlier request): the initialize answer never waits for it."""
        if self.runtime is None:
            if self._roots_at_start is None:
                raise wire_errors.not_initialized()
            if self.refused_root is not None:
                raise root_refusal.request_error(self.refused_root)
            self.settle()
            self.toolhost_types()  # loaded before the first call needs them
            self.warm_up.join()  # usually done: it started when the initialize answer left
            from lsp_server import compose  # the whole house: after the answer

            opened = compose.open_runtime(
                self._roots_at_start,
                self.dirs,
                loaded=self.config_state.loaded,  # settled above, with initializationOptions
                attach=self.attach_listener,
                editor=self._editor_link(),
            )
            self.runtime, self.lifecycle = opened.runtime, opened.lifecycle
            self.config_state.problems += opened.problems  # shown at `initialized`
            self.documents = cast("EditorDocuments | None", self.runtime.documents)
        return self.runtime

    async def runtime_ready(self) -> Runtime:
        """ensure_runtime for async handlers: the loop keeps serving (status, cancels) while
        the warm-up thread finishes loading the runtime's modules."""
        if self.runtime is None and self._roots_at_start is not None:
            await self.warm_up.wait()
        return self.ensure_runtime()

    def editor_link(self) -> EditorLink:
        """What a runtime of this server needs of the editor (approvals, progress, the
        activity view, open buffers)."""
        return self._editor_link()

    def _editor_link(self) -> EditorLink:
        from lsp_server.compose import EditorLink
        from lsp_server.server import watch
        from lsp_server.server.editor import EditorBridge

        bridge = EditorBridge(self)
        build_progress = None
        if self.features.work_done_progress:
            build_progress = watch.BuildProgress(self, asyncio.get_event_loop())
        return EditorLink(
            bridge=bridge,
            open_documents=bridge,
            send_progress=self._send_progress,
            did_call=self._did_call,
            index_build_listener=build_progress,
        )

    def _drop_connection(self) -> None:
        writer = self.protocol.writer
        close = getattr(writer, "close", None)
        if callable(close):
            close()

    def _roots(self, params: types.InitializeParams) -> list[Path]:
        if self.root_override is not None:
            return [self.root_override]
        roots = [uri_to_path(f.uri) or Path(f.uri) for f in params.workspace_folders or []]
        if not roots and params.root_uri:
            roots = [uri_to_path(params.root_uri) or Path(params.root_uri)]
        if not roots and params.root_path:
            roots = [Path(params.root_path)]
        return roots or [Path.cwd()]

    async def wait_for_settings(self) -> None:
        if self.settings_ready.is_set():  # every call after the first: no timer, no task
            return
        # Bounded: a client that never sends `initialized` still gets its calls run.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.settings_ready.wait(), timeout=15)

    async def fetch_client_settings(self) -> None:
        """workspace/configuration section `toolhost` (between initializationOptions and the
        workspace file in precedence); asked after `initialized` and on every change."""
        try:
            await self._fetch_client_settings()
        finally:
            self.settings_ready.set()

    async def _fetch_client_settings(self) -> None:
        runtime = self.runtime
        if runtime is None or not self.supports_configuration:
            return
        try:
            answer = await asyncio.wait_for(
                self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="toolhost")])
                ),
                timeout=10,
            )
        except Exception as exc:  # an editor that fails here must not stop the server
            log.warning("workspace/configuration failed: %r", exc)
            return
        section = answer[0] if answer else None
        if not isinstance(section, dict):
            return
        await self.config_state.reload(runtime, section)

    def _notify_untrusted(self, notice: ConfigUntrustedParams) -> None:
        self.protocol.notify(method_names.TOOLHOST_CONFIG_UNTRUSTED, notice)

    def _show_warning(self, message: str) -> None:
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )

    def _send_progress(self, token: str | int, value: dict[str, Any]) -> None:
        self.protocol.notify(types.PROGRESS, types.ProgressParams(token=token, value=value))

    def _did_call(self, record: DidCallParams) -> None:
        """Sent on the next loop turn. An editor's call reports once its answer is written
        (typed_protocol.py holds it); a call reported while its task runs (none held it) thus
        leaves in one write with its answer, which its task's done callback queues behind
        this (transport.py)."""
        try:
            asyncio.get_running_loop().call_soon(self._notify_did_call, record)
        except RuntimeError:  # no loop here (a thread): send it now
            self._notify_did_call(record)

    def _notify_did_call(self, record: DidCallParams) -> None:
        self.protocol.notify(method_names.TOOLHOST_DID_CALL, record)

    async def start_attach_listener(self) -> None:
        """Once the editor is initialized: MCP agents may attach (compose wired the socket)."""
        if self.runtime is not None:
            await self.lifecycle.start()

    def require_checkpoints(self) -> Checkpoints:
        from lsp_server.checkpoints.recorder import Checkpoints

        checkpoints: Checkpoints = self.ensure_runtime().services.get(Checkpoints)
        return checkpoints

    # -- requests -------------------------------------------------------------------

    def list_tools(self, params: ToolsParams) -> ToolsResult:
        from lsp_server.protocol import ToolInfo, ToolsResult

        surface = params.surface or "core"
        if params.session is not None and self.runtime is not None:
            session = self.runtime.sessions.get(params.session)
            session.surface = session.surface or surface
        infos = [
            ToolInfo(
                name=tool.name,
                read_only=tool.contract.labelled_read_only,
                description=tool.contract.description,
                input_schema=tool.contract.public()["inputSchema"],
            )
            for tool in self.registry.surface(surface)
        ]
        return ToolsResult(surface=surface, surface_hash=self.registry.hash(surface), tools=infos)

    def status(self, params: StatusParams) -> StatusResult:
        from lsp_server.protocol import StatusResult

        self.settle()
        runtime = self.runtime
        sessions = [s.status() for s in runtime.sessions.all()] if runtime else []
        extra = {name: provider() for name, provider in self.lifecycle.status_providers.items()}
        return StatusResult(
            version=__version__,
            roots=[str(r) for r in runtime.workspace.roots] if runtime else [],
            sessions=sessions,
            jobs=list(extra.pop("jobs", [])),
            language_servers=list(extra.pop("languageServers", [])),
            index=extra.pop("index", None),
            **self.config_state.status_fields(),
            # Settings ignored (the workspace is not trusted) are shown beside the problems:
            # the notice at start is gone by the time the user asks why one had no effect.
            config_problems=self.config_state.problems + self.config_state.notices,
            lsp_answers=extra.pop("lspAnswers", None),
            mcp_sessions=self._attach_listener.status() if self._attach_listener else [],
            leftover_temps=extra.pop("leftoverTemps", None),
            checkpoints=extra.pop("checkpoints", None),
        )

    def attach_status(self) -> dict[str, Any]:
        """For `toolhost doctor` and `status`: the editor, lsp_* answers, policy sources."""
        provider = self.lifecycle.status_providers.get("lspAnswers")
        loaded = self.config_state.loaded
        sources = loaded.policy_sources if loaded else None
        answers = provider() if provider else None
        return {"editor": self.features.name, "lspAnswers": answers, "policySources": sources}

    async def close(self) -> None:
        """Stop every child (jobs, language servers): on shutdown, exit or disconnect."""
        await self.isolated.close()
        await self.lifecycle.shutdown()
