"""The LSP features and toolhost/* methods of a ToolhostServer: each handler is thin and
hands over to the server's state (server/server.py) or the runtime."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from lsp_server.core.errors import ToolError
from lsp_server.core.uris import uri_to_path
from lsp_server.home.dirs import Dirs
from lsp_server.server import root_refusal, wire_errors
from lsp_server.server.isolated_sessions import NoWorktree
from lsp_server.server.server import ToolhostServer
from lsp_server.wire import method_names

# Annotations only (pygls finds the server by the first parameter's name, `ls`): the message
# types load with the first toolhost/* message, after the initialize answer.
if TYPE_CHECKING:
    from lsp_server.protocol import (
        CallParams,
        CallResult,
        CheckpointsParams,
        CheckpointsResult,
        PreviewParams,
        PreviewResult,
        ResultPage,
        ResultParams,
        RevertParams,
        RevertResult,
        RevertSessionParams,
        RevertSessionResult,
        SessionChangesParams,
        SessionChangesResult,
        StatusParams,
        StatusResult,
        ToolsParams,
        ToolsResult,
        TrustConfigParams,
        TrustConfigResult,
    )


def create_server(
    root: Path | None = None, tcp_token: str | None = None, dirs: Dirs | None = None
) -> ToolhostServer:
    """A ToolhostServer with its LSP features and toolhost/* methods registered."""
    server = ToolhostServer(root, tcp_token, dirs)

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: ToolhostServer, params: types.InitializeParams) -> None:
        ls.setup(params)

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: ToolhostServer, params: types.InitializedParams) -> None:
        # Built now, before anything is awaited (an await here would leave pygls' generator
        # for `initialized` to be cancelled mid-way at EOF): the modules are usually loaded
        # by now, by the warm-up that started with the initialize answer.
        if ls.refused_root is not None:  # no runtime over a home folder or `/`
            ls.window_show_message(root_refusal.notice(ls.refused_root))
            ls.settings_ready.set()
            return
        ls.ensure_runtime()
        if ls.features.watched_files_dynamic:
            from lsp_server.server import watch

            ls.client_register_capability(watch.watched_files_registration())
        config_state = ls.config_state
        for problem in config_state.problems + config_state.notices:
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning, message=f"toolhost: {problem}"
                )
            )
        config_state.send_untrusted()  # a .toolhost.toml waiting for the user's approval
        await ls.start_attach_listener()
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
        from lsp_server.server import watch

        if ls.refused_root is None:
            watch.note_watched_changes(ls.ensure_runtime(), params)
        from lsp_server.config.approval import names_workspace_config

        runtime = ls.ensure_runtime()
        if names_workspace_config(runtime.workspace.roots, params):
            await ls.config_state.reload(runtime)

    # Registering these makes pygls announce open/close sync (it keeps the text itself);
    # the handlers only tell the document source, which waits for edits to arrive.
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_did_open(ls: ToolhostServer, params: types.DidOpenTextDocumentParams) -> None:
        if ls.refused_root is not None:
            return
        ls.ensure_runtime()  # sets ls.documents, the editor's buffers
        documents = ls.documents
        if documents is not None:
            documents.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_did_change(ls: ToolhostServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.refused_root is not None:
            return
        ls.ensure_runtime()  # sets ls.documents, the editor's buffers
        documents = ls.documents
        if documents is not None:
            documents.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def on_did_save(ls: ToolhostServer, params: types.DidSaveTextDocumentParams) -> None:
        """What the editor saved is the user's: a shell command running meanwhile does not
        take it into its checkpoint (checkpoints/sharing/attribution.py)."""
        if ls.refused_root is not None:
            return
        from lsp_server.checkpoints.recorder import Checkpoints

        runtime = ls.ensure_runtime()
        path = uri_to_path(params.text_document.uri)
        if path is not None:
            with contextlib.suppress(LookupError):
                await runtime.services.get(Checkpoints).note_save(path)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_did_close(ls: ToolhostServer, params: types.DidCloseTextDocumentParams) -> None:
        if ls.refused_root is not None:
            return
        ls.ensure_runtime()  # sets ls.documents, the editor's buffers
        documents = ls.documents
        if documents is not None:
            documents.closed(params.text_document.uri)

    @server.feature(method_names.TOOLHOST_TOOLS)
    async def on_tools(ls: ToolhostServer, params: ToolsParams) -> ToolsResult:
        return ls.list_tools(params)

    @server.feature(method_names.TOOLHOST_CALL)
    async def on_call(ls: ToolhostServer, params: CallParams) -> CallResult:
        if ls.refused_root is not None:
            return root_refusal.refused_call(ls.refused_root, params)
        runtime = ls.runtime if ls.runtime is not None else await ls.runtime_ready()
        await ls.wait_for_settings()
        try:
            runtime = await ls.isolated.route(params, runtime)  # sessions.isolated: a worktree
        except NoWorktree as refused:
            return refused.result
        return await runtime.call(params)

    @server.feature(method_names.TOOLHOST_PREVIEW)
    async def on_preview(ls: ToolhostServer, params: PreviewParams) -> PreviewResult:
        runtime = await ls.runtime_ready()
        await ls.wait_for_settings()
        from lsp_server.runtime.preview import preview_call  # with the runtime, not at start

        return await preview_call(runtime, params)

    @server.feature(method_names.TOOLHOST_RESULT)
    async def on_result(ls: ToolhostServer, params: ResultParams) -> ResultPage:
        return wire_errors.result_page(ls.ensure_runtime(), params)

    @server.feature(method_names.TOOLHOST_CHECKPOINTS)
    async def on_checkpoints(ls: ToolhostServer, params: CheckpointsParams) -> CheckpointsResult:
        from lsp_server.runtime.reverts import list_checkpoints

        return await list_checkpoints(ls.require_checkpoints(), params)

    @server.feature(method_names.TOOLHOST_REVERT)
    async def on_revert(ls: ToolhostServer, params: RevertParams) -> RevertResult:
        from lsp_server.runtime.file_service import FileService
        from lsp_server.runtime.reverts import revert_request
        from lsp_server.runtime.sessions.observations import Observations

        runtime = ls.ensure_runtime()
        files = FileService(runtime.workspace, Observations(), runtime.config.limits, ls.documents)
        try:
            return await revert_request(ls.require_checkpoints(), files, runtime.locks, params)
        except ToolError as exc:
            raise JsonRpcInvalidParams(
                exc.message, data={"code": exc.code, "recovery": exc.recovery}
            ) from None

    @server.feature(method_names.TOOLHOST_SESSION_CHANGES)
    async def on_session_changes(
        ls: ToolhostServer, params: SessionChangesParams
    ) -> SessionChangesResult:
        from lsp_server.runtime.session_changes import session_changes

        return await session_changes(ls.require_checkpoints(), params)

    @server.feature(method_names.TOOLHOST_REVERT_SESSION)
    async def on_revert_session(
        ls: ToolhostServer, params: RevertSessionParams
    ) -> RevertSessionResult:
        from lsp_server.runtime.file_service import FileService
        from lsp_server.runtime.session_changes import revert_session
        from lsp_server.runtime.sessions.observations import Observations

        runtime = ls.ensure_runtime()
        files = FileService(runtime.workspace, Observations(), runtime.config.limits, ls.documents)
        return await revert_session(ls.require_checkpoints(), files, runtime.locks, params)

    @server.feature(method_names.TOOLHOST_STATUS)
    async def on_status(ls: ToolhostServer, params: StatusParams) -> StatusResult:
        return ls.status(params)

    @server.feature(method_names.TOOLHOST_TRUST_CONFIG)
    async def on_trust_config(ls: ToolhostServer, params: TrustConfigParams) -> TrustConfigResult:
        # Only this connection (the editor's own) reaches it: the attach socket and ACP
        # forward tool calls, never toolhost/* requests (see config/approval.py).
        runtime = ls.runtime if ls.runtime is not None else await ls.runtime_ready()
        return await ls.config_state.trust(runtime, params)

    @server.command(method_names.EXECUTE_COMMAND_CALL)
    async def on_execute_call(ls: ToolhostServer, *args: Any) -> Any:
        params = wire_errors.command_params(ls.protocol._converter, args)
        if ls.refused_root is not None:
            refused = root_refusal.refused_call(ls.refused_root, params)
            return ls.protocol._converter.unstructure(refused)
        runtime = await ls.runtime_ready()
        await ls.wait_for_settings()
        result = await runtime.call(params)
        return ls.protocol._converter.unstructure(result)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: ToolhostServer, params: None) -> None:
        await ls.close()

    return server
