"""How the server keeps the symbol index fresh: the index service on the runtime, a call
listener for toolhost's own writes, and workspace/didChangeWatchedFiles from the editor."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from lsp_server.codeintel.languages import all_extensions
from lsp_server.codeintel.service import CodeIndexService
from lsp_server.runtime.dispatch import CallRecord, Runtime
from lsp_server.state import state_dir

WATCH_REGISTRATION_ID = "toolhost-index-watch"


def install(runtime: Runtime) -> CodeIndexService:
    """Give a runtime its index service, told about every file toolhost writes."""
    service = CodeIndexService(runtime.state_dir or state_dir())
    runtime.services.register(CodeIndexService, service)

    def on_call(record: CallRecord) -> None:
        if record.written:
            service.files_changed(record.written)  # only notes them: cheap on the loop

    runtime.listeners.append(on_call)
    return service


def watched_files_registration() -> types.RegistrationParams:
    """Dynamic registration of file watchers for every extension the index covers."""
    suffixes = ",".join(sorted(ext.lstrip(".") for ext in all_extensions()))
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[
            types.FileSystemWatcher(glob_pattern=f"**/*.{{{suffixes}}}"),
            types.FileSystemWatcher(glob_pattern="**/.gitignore"),
        ]
    )
    return types.RegistrationParams(
        registrations=[
            types.Registration(
                id=WATCH_REGISTRATION_ID,
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=options,
            )
        ]
    )


def note_watched_changes(runtime: Runtime, params: types.DidChangeWatchedFilesParams) -> None:
    """The editor saw files change (git checkout, another tool): the index re-checks them
    before its next query."""
    paths = [Path(p) for p in (to_fs_path(change.uri) for change in params.changes) if p]
    runtime.services.get(CodeIndexService).files_changed(paths)
