"""ToolhostServer: the pygls language server that exposes the tool runtime."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
from collections.abc import Generator
from pathlib import Path
from typing import Any

import attrs
import cattrs
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from lsp_server import __version__, index_wiring, protocol, stdio
from lsp_server.config import Config
from lsp_server.policy.wiring import attach_policy, load_layers, reconfigure
from lsp_server.protocol import (
    PROTOCOL_VERSION,
    CallParams,
    CallResult,
    CheckpointsParams,
    CheckpointsResult,
    ResultPage,
    ResultParams,
    RevertParams,
    RevertResult,
    StatusParams,
    StatusResult,
    ToolInfo,
    ToolsParams,
    ToolsResult,
)
from lsp_server.runtime.checkpoints import Checkpoints
from lsp_server.runtime.client import ClientFeatures
from lsp_server.runtime.contract import SURFACES, Registry
from lsp_server.runtime.dispatch import CallRecord, Runtime
from lsp_server.runtime.documents import EditorDocuments
from lsp_server.runtime.errors import ToolError
from lsp_server.runtime.files import FileService
from lsp_server.runtime.observations import Observations
from lsp_server.runtime.reverts import list_checkpoints, revert_request
from lsp_server.runtime.workspace import Workspace
from lsp_server.state import state_dir
from lsp_server.tools import build_registry
from lsp_server.wiring import Lifecycle, install_services

log = logging.getLogger(__name__)


def _message_type(spec: protocol.MethodSpec) -> type[Any]:
    fields = {
        "params": attrs.field(type=spec.params),
        "method": attrs.field(type=str),
        "jsonrpc": attrs.field(type=str),
    }
    if spec.result is not None:
        fields = {"id": attrs.field(type=Any), **fields}
    return attrs.make_class(spec.params.__name__ + "Message", fields)


def _response_type(spec: protocol.MethodSpec) -> type[Any]:
    assert spec.result is not None
    fields = {
        "id": attrs.field(type=Any),
        "result": attrs.field(type=spec.result | None, default=None),  # type: ignore[arg-type]
        "jsonrpc": attrs.field(type=str, default="2.0"),
    }
    return attrs.make_class(spec.result.__name__ + "Response", fields)


MESSAGE_TYPES = {spec.method: _message_type(spec) for spec in protocol.METHODS}
RESPONSE_TYPES = {
    spec.method: _response_type(spec) for spec in protocol.METHODS if spec.result is not None
}


def toolhost_converter() -> cattrs.Converter:
    return protocol.register_message_hooks(get_converter())


class ToolhostProtocol(LanguageServerProtocol):
    """Types the toolhost/* messages from one table; adds the experimental capability."""

    _server: ToolhostServer

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in MESSAGE_TYPES:
            return MESSAGE_TYPES[method]
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in RESPONSE_TYPES:
            return RESPONSE_TYPES[method]
        return super().get_result_type(method)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """A request whose params cannot be read gets a JSON-RPC error instead of silence."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                self._send_response(data["id"], error=exc.to_response_error())
            raise

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"toolhost": self._server.advertised()}
        return result


class ToolhostServer(LanguageServer):
    def __init__(self, root_override: Path | None = None, tcp_token: str | None = None) -> None:
        super().__init__(
            "toolhost",
            __version__,
            protocol_cls=ToolhostProtocol,
            converter_factory=toolhost_converter,
        )
        self.root_override = root_override
        self.tcp_token = tcp_token
        self.registry: Registry = build_registry()
        self.config = Config()
        self.config_problems: list[str] = []
        self.config_notices: list[str] = []
        self.init_options: dict[str, Any] = {}
        self.supports_configuration = False
        # Calls wait until the client's workspace/configuration answer is in (or failed), so
        # that no call runs under a policy that is about to change.
        self.settings_ready = asyncio.Event()
        self.policy_sources: list[str] = []
        self.features = ClientFeatures()
        self.runtime: Runtime | None = None
        self.documents: EditorDocuments | None = None
        self.lifecycle = Lifecycle()
        self._closed = False

    def advertised(self) -> dict[str, Any]:
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "surfaceHash": self.registry.hash("core"),
            "fullHash": self.registry.hash("full"),
            "surfaces": list(SURFACES),
            "toolCount": len(self.registry.surface("full")),
        }

    # -- set-up ---------------------------------------------------------------------

    def setup(self, params: types.InitializeParams) -> None:
        options = params.initialization_options or {}
        toolhost_options = options.get("toolhost", {}) if isinstance(options, dict) else {}
        if not isinstance(toolhost_options, dict):
            # e.g. an empty Lua table, which Neovim encodes as []: never refuse to start.
            if toolhost_options:
                self.config_problems.append("initializationOptions.toolhost should be an object")
            toolhost_options = {}
        if self.tcp_token is not None and not secrets.compare_digest(
            str(toolhost_options.get("token", "")), self.tcp_token
        ):
            asyncio.get_running_loop().call_later(0.1, self._drop_connection)
            raise JsonRpcInvalidRequest("toolhost: wrong or missing token for a TCP connection")
        self.init_options = toolhost_options if isinstance(toolhost_options, dict) else {}
        roots = self._roots(params)
        loaded = load_layers(self.init_options, roots)
        self.config = loaded.config
        self.config_problems += loaded.problems
        self.config_notices = loaded.notices
        self.policy_sources = loaded.sources
        self.features = _client_features(params.capabilities)
        workspace_caps = params.capabilities.workspace
        self.supports_configuration = bool(workspace_caps and workspace_caps.configuration)
        if not self.supports_configuration:
            self.settings_ready.set()
        self.runtime = self.build_runtime(roots)
        index_wiring.forward_build_progress(self, self.runtime, self.features.work_done_progress)
        for problem in self.config_problems:
            log.warning("configuration: %s", problem)

    def _drop_connection(self) -> None:
        writer = self.protocol.writer
        close = getattr(writer, "close", None)
        if callable(close):
            close()

    def _roots(self, params: types.InitializeParams) -> list[Path]:
        if self.root_override is not None:
            return [self.root_override]
        roots = [Path(to_fs_path(f.uri) or f.uri) for f in params.workspace_folders or []]
        if not roots and params.root_uri:
            roots = [Path(to_fs_path(params.root_uri) or params.root_uri)]
        if not roots and params.root_path:
            roots = [Path(params.root_path)]
        return roots or [Path.cwd()]

    def build_runtime(self, roots: list[Path]) -> Runtime:
        workspace = Workspace.from_config(roots, self.config.workspace)
        bridge = LspClientBridge(self)
        runtime = Runtime(
            self.registry, workspace, self.config, client=bridge, state_dir=state_dir()
        )
        runtime.progress_sender = self._send_progress
        runtime.documents = self.documents = EditorDocuments(
            _LiveDocuments(self), bridge, self.config.edits, workspace
        )
        runtime.listeners.append(self._did_call)
        attach_policy(runtime, bridge, problems=self.config_problems)
        install_services(runtime, self.lifecycle)
        return runtime

    async def wait_for_settings(self) -> None:
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
        loaded = load_layers(self.init_options, runtime.workspace.roots, section)
        reconfigure(runtime, loaded)
        self.policy_sources = loaded.sources
        for problem in loaded.problems + loaded.notices:
            if problem not in self.config_problems and problem not in self.config_notices:
                self.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Warning, message=f"toolhost: {problem}"
                    )
                )
        self.config_problems[:] = loaded.problems
        self.config_notices[:] = loaded.notices

    def _send_progress(self, token: str | int, value: dict[str, Any]) -> None:
        self.protocol.notify(types.PROGRESS, types.ProgressParams(token=token, value=value))

    def _did_call(self, record: CallRecord) -> None:
        self.protocol.notify(
            "toolhost/didCall",
            protocol.DidCallParams(
                call_id=record.call_id,
                session=record.session,
                tool=record.tool,
                decision=record.decision,
                rule=record.rule,
                is_error=record.is_error,
                code=record.code,
                duration_ms=record.duration_ms,
                paths=list(record.paths),
            ),
        )

    def require_runtime(self) -> Runtime:
        if self.runtime is None:
            raise ToolError(
                "server.not_initialized", "the server is not initialized", "send initialize first"
            )
        return self.runtime

    def require_checkpoints(self) -> Checkpoints:
        return self.require_runtime().services.get(Checkpoints)

    # -- requests -------------------------------------------------------------------

    def list_tools(self, params: ToolsParams) -> ToolsResult:
        surface = params.surface or "core"
        infos = [
            ToolInfo(
                name=tool.name,
                read_only=tool.contract.read_only,
                description=tool.contract.description,
                input_schema=tool.contract.public()["inputSchema"],
            )
            for tool in self.registry.surface(surface)
        ]
        return ToolsResult(surface=surface, surface_hash=self.registry.hash(surface), tools=infos)

    def status(self, params: StatusParams) -> StatusResult:
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
            policy_sources=self.policy_sources,
            config_problems=self.config_problems,
        )

    async def close(self) -> None:
        """Stop every child (jobs, language servers): on shutdown, exit or disconnect."""
        if self._closed:
            return
        self._closed = True
        for hook in self.lifecycle.shutdown_hooks:
            try:
                await asyncio.wait_for(hook(), timeout=10)
            except Exception:
                log.exception("shutdown hook failed")


def _client_features(capabilities: types.ClientCapabilities) -> ClientFeatures:
    experimental = capabilities.experimental if isinstance(capabilities.experimental, dict) else {}
    declared = experimental.get("toolhost") or {}
    if not isinstance(declared, dict):
        declared = {}
    workspace = capabilities.workspace
    window = capabilities.window
    watched = workspace.did_change_watched_files if workspace else None
    return ClientFeatures(
        approvals=bool(declared.get("approvals")),
        save_document=bool(declared.get("saveDocument")),
        lsp_proxy=bool(declared.get("lspProxy")),
        pre_approved=bool(declared.get("preApproved")),
        apply_edit=bool(workspace and workspace.apply_edit),
        work_done_progress=bool(window and window.work_done_progress),
        watched_files_dynamic=bool(watched and watched.dynamic_registration),
    )


class _LiveDocuments:
    """pygls' open documents, looked up on use: its workspace exists only once pygls has
    handled initialize, after the runtime is built."""

    def __init__(self, server: ToolhostServer) -> None:
        self._server = server

    @property
    def text_documents(self) -> dict[str, TextDocument]:
        try:
            documents: dict[str, TextDocument] = self._server.workspace.text_documents
        except RuntimeError:
            return {}
        return documents


class LspClientBridge:
    def __init__(self, server: ToolhostServer) -> None:
        self._server = server

    @property
    def features(self) -> ClientFeatures:
        return self._server.features

    def notify(self, method: str, params: Any) -> None:
        self._server.protocol.notify(method, params)

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        future = self._server.protocol.send_request_async(method, params)
        return await asyncio.wait_for(future, timeout)

    def show_message(self, text: str, level: str = "warning") -> None:
        kind = {
            "error": types.MessageType.Error,
            "warning": types.MessageType.Warning,
            "info": types.MessageType.Info,
        }.get(level, types.MessageType.Warning)
        self._server.window_show_message(types.ShowMessageParams(type=kind, message=text))


class LogForwarder(logging.Handler):
    """Forwards log records to the client's window/logMessage (stdout belongs to JSON-RPC)."""

    def __init__(self, server: ToolhostServer) -> None:
        super().__init__(logging.INFO)
        self._server = server

    def emit(self, record: logging.LogRecord) -> None:
        if self._server.runtime is None:
            return
        kind = (
            types.MessageType.Error
            if record.levelno >= logging.ERROR
            else (
                types.MessageType.Warning
                if record.levelno >= logging.WARNING
                else types.MessageType.Log
            )
        )
        try:
            self._server.window_log_message(
                types.LogMessageParams(type=kind, message=self.format(record))
            )
        except Exception:  # never let logging break the server
            self.handleError(record)


def create_server(root: Path | None = None, tcp_token: str | None = None) -> ToolhostServer:
    server = ToolhostServer(root, tcp_token)

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: ToolhostServer, params: types.InitializeParams) -> None:
        ls.setup(params)

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: ToolhostServer, params: types.InitializedParams) -> None:
        if ls.features.watched_files_dynamic:
            ls.client_register_capability(index_wiring.watched_files_registration())
        for problem in ls.config_problems + ls.config_notices:
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning, message=f"toolhost: {problem}"
                )
            )
        await ls.fetch_client_settings()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_configuration_changed(
        ls: ToolhostServer, params: types.DidChangeConfigurationParams
    ) -> None:
        await ls.fetch_client_settings()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def on_watched_files(
        ls: ToolhostServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        if ls.runtime is not None:
            index_wiring.note_watched_changes(ls.runtime, params)

    # Registering these makes pygls announce open/close sync (it keeps the text itself);
    # the handlers only tell the document source, which waits for edits to arrive.
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_did_open(ls: ToolhostServer, params: types.DidOpenTextDocumentParams) -> None:
        if ls.documents is not None:
            ls.documents.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_did_change(ls: ToolhostServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.documents is not None:
            ls.documents.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_did_close(ls: ToolhostServer, params: types.DidCloseTextDocumentParams) -> None:
        if ls.documents is not None:
            ls.documents.closed(params.text_document.uri)

    @server.feature("toolhost/tools")
    async def on_tools(ls: ToolhostServer, params: ToolsParams) -> ToolsResult:
        return ls.list_tools(params)

    @server.feature("toolhost/call")
    async def on_call(ls: ToolhostServer, params: CallParams) -> CallResult:
        runtime = ls.require_runtime()
        await ls.wait_for_settings()
        return await runtime.call(params)

    @server.feature("toolhost/result")
    async def on_result(ls: ToolhostServer, params: ResultParams) -> ResultPage:
        session = ls.require_runtime().sessions.get(params.session or "default")
        page = session.results.page(params.result_ref, params.offset, params.limit)
        return ResultPage(**attrs.asdict(page))

    @server.feature("toolhost/checkpoints")
    async def on_checkpoints(ls: ToolhostServer, params: CheckpointsParams) -> CheckpointsResult:
        return await list_checkpoints(ls.require_checkpoints(), params)

    @server.feature("toolhost/revert")
    async def on_revert(ls: ToolhostServer, params: RevertParams) -> RevertResult:
        runtime = ls.require_runtime()
        files = FileService(runtime.workspace, Observations(), runtime.config.limits, ls.documents)
        try:
            return await revert_request(ls.require_checkpoints(), files, runtime.locks, params)
        except ToolError as exc:
            raise JsonRpcInvalidParams(
                exc.message, data={"code": exc.code, "recovery": exc.recovery}
            ) from None

    @server.feature("toolhost/status")
    async def on_status(ls: ToolhostServer, params: StatusParams) -> StatusResult:
        return ls.status(params)

    @server.command(protocol.EXECUTE_COMMAND_CALL)
    async def on_execute_call(ls: ToolhostServer, *args: Any) -> Any:
        raw = args[0] if args else {}
        params = ls.protocol._converter.structure(raw, CallParams)
        runtime = ls.require_runtime()
        await ls.wait_for_settings()
        result = await runtime.call(params)
        return ls.protocol._converter.unstructure(result)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: ToolhostServer, params: None) -> None:
        await ls.close()

    return server


def _stop_children_on_sigterm(server: ToolhostServer) -> None:
    """An editor stopping the server with SIGTERM must not orphan its children: the kill
    hooks (synchronous, no waiting) run first, then the default action ends the process."""

    def handler(signum: int, frame: object) -> None:
        for hook in server.lifecycle.kill_hooks:
            try:
                hook()
            except Exception:
                log.exception("kill hook failed")
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, handler)


def serve_stdio(root: Path | None = None) -> None:
    server = create_server(root)
    _setup_logging(server)
    _stop_children_on_sigterm(server)

    async def main() -> None:
        try:
            await stdio.serve_pipes(
                server.protocol, server.report_server_error, stdio.MAX_MESSAGE_BYTES
            )
        finally:
            await server.close()

    with contextlib.suppress(KeyboardInterrupt, SystemExit, BrokenPipeError):
        asyncio.run(main())


def serve_tcp(port: int, root: Path | None = None) -> None:
    token = secrets.token_urlsafe(24)
    token_file = state_dir() / f"tcp-{port}.token"
    token_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    server = create_server(root, tcp_token=token)
    _setup_logging(server)
    _stop_children_on_sigterm(server)
    print(
        f"toolhost: listening on 127.0.0.1:{port}; token in {token_file}",
        flush=True,
        file=__import__("sys").stderr,
    )
    try:
        server.start_tcp("127.0.0.1", port)
    finally:
        asyncio.run(server.close())


def _setup_logging(server: ToolhostServer) -> None:
    root_logger = logging.getLogger()
    level = os.environ.get("TOOLHOST_LOG", "INFO").upper()
    root_logger.setLevel(level)
    stderr = logging.StreamHandler()
    stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root_logger.addHandler(stderr)
    forward = LogForwarder(server)
    forward.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.getLogger("lsp_server").addHandler(forward)
    logging.getLogger("pygls").setLevel(logging.WARNING)
