"""How the editor helps keep the symbol index fresh and shows its builds: the file watchers
it registers (workspace/didChangeWatchedFiles) and work-done progress of background builds.
The index service and its refresh on toolhost's own writes are wired in compose.py."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from lsp_server.core.uris import uri_to_path

if TYPE_CHECKING:
    from lsp_server.codeintel.indexes import BuildState
    from lsp_server.runtime.dispatch import Runtime

log = logging.getLogger(__name__)

WATCH_REGISTRATION_ID = "toolhost-index-watch"
REPORT_INTERVAL_SECONDS = 0.5


def watched_files_registration() -> types.RegistrationParams:
    """Dynamic registration of file watchers for every extension the index covers."""
    from lsp_server.codeintel.languages import all_extensions  # tree-sitter: not at start

    suffixes = ",".join(sorted(ext.lstrip(".") for ext in all_extensions()))
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[
            types.FileSystemWatcher(glob_pattern=f"**/*.{{{suffixes}}}"),
            types.FileSystemWatcher(glob_pattern="**/.gitignore"),
            # A changed workspace config is re-read: untrusted until approved again.
            types.FileSystemWatcher(glob_pattern="**/.toolhost.toml"),
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
    from lsp_server.codeintel.indexes import CodeIndexService  # loaded with the runtime

    paths = [p for p in (uri_to_path(change.uri) for change in params.changes) if p]
    runtime.services.get(CodeIndexService).files_changed(paths)


class BuildProgress:
    """Shows background index builds in the editor: window/workDoneProgress/create, then
    $/progress begin, report (at most every half second) and end. Build threads call it;
    everything is sent from the event loop."""

    def __init__(self, server: LanguageServer, loop: asyncio.AbstractEventLoop) -> None:
        self._server = server
        self._loop = loop
        self._tokens: dict[Path, str] = {}
        self._ready: set[str] = set()
        self._ended: set[str] = set()
        self._last_report = 0.0

    def __call__(self, root: Path, state: BuildState) -> None:
        self._loop.call_soon_threadsafe(self._on_loop, root, state)

    def _on_loop(self, root: Path, state: BuildState) -> None:
        token = self._tokens.get(root)
        if token is None:
            if not state.running:
                return
            token = self._tokens[root] = f"toolhost-index-{uuid.uuid4().hex[:8]}"
            self._loop.create_task(self._begin(token, root))
            return
        if not state.running:
            del self._tokens[root]
            self._ended.add(token)
            if token in self._ready:
                self._end(token, state)
            return
        now = time.monotonic()
        if token in self._ready and now - self._last_report >= REPORT_INTERVAL_SECONDS:
            self._last_report = now
            percentage = int(100 * state.done / state.total) if state.total else 0
            self._server.work_done_progress.report(
                token,
                types.WorkDoneProgressReport(
                    message=f"{state.done}/{state.total} files", percentage=percentage
                ),
            )

    async def _begin(self, token: str, root: Path) -> None:
        try:
            await self._server.work_done_progress.create_async(token)
        except Exception:  # the client refused a token: the build goes on silently
            log.info("the client did not accept a progress token for the index build")
            return
        self._server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="toolhost: indexing symbols", message=str(root), percentage=0
            ),
        )
        self._ready.add(token)
        if token in self._ended:
            self._end(token, None)

    def _end(self, token: str, state: BuildState | None) -> None:
        self._ready.discard(token)
        self._ended.discard(token)
        message = f"{state.total} files" if state and not state.error else None
        if state and state.error:
            message = f"failed: {state.error}"
        self._server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
