"""One running language server: initialize, server->client requests, progress, document
sync and diagnostics. Answers are kept as plain JSON (servers send odd or unknown fields).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from lsp_server.core.uris import normalize_uri, path_to_uri
from lsp_server.langservers.capabilities import client_capabilities
from lsp_server.langservers.discovery import ResolvedServer
from lsp_server.langservers.jsonrpc import (
    CONTENT_MODIFIED,
    METHOD_NOT_FOUND,
    SERVER_CANCELLED,
    Json,
    JsonRpcProcess,
    ResponseError,
)
from lsp_server.langservers.positions import PositionEncoding

log = logging.getLogger(__name__)

CLIENT_NAME = "toolhost"
REQUEST_TOKEN_PREFIX = "toolhost-request-"
# Stands for background analysis that a server reports only in its log (table row).
_BACKGROUND_TOKEN = "toolhost-background-analysis"


@attrs.define
class OpenDocument:
    uri: str
    language_id: str
    version: int
    text: str
    last_used: float
    sync_sequence: int = 0
    """The diagnostics sequence when this version was sent: a publish without a version
    counts for this version only if it arrived later."""


@attrs.define
class PublishedDiagnostics:
    version: int | None
    diagnostics: list[Json]
    sequence: int
    """Order of arrival (to tell a publish that came after our last didChange)."""


class LanguageServerClient:
    def __init__(self, server: ResolvedServer, root: Path) -> None:
        self.server = server
        self.root = root
        self.root_uri = path_to_uri(root)
        self.process = JsonRpcProcess(
            server.command,
            cwd=str(root),
            env=server.child_env(),
            on_request=self._on_request,
            on_notification=self._on_notification,
        )
        self.capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        self.encoding: PositionEncoding = "utf-16"
        self.started_at = 0.0
        self.last_used = time.monotonic()
        self.documents: dict[str, OpenDocument] = {}
        self._progress: dict[Any, str] = {}
        self._progress_changed = asyncio.Event()
        self.progress_epoch = 0
        """Counts progress that began: a change during a request means the server was
        (re)indexing while it answered, so the answer may be incomplete."""
        self._request_tokens = 0
        self._ready_pattern: re.Pattern[str] | None = None
        self._diagnostics: dict[str, PublishedDiagnostics] = {}
        self._diagnostics_sequence = 0
        self._diagnostics_changed = asyncio.Event()
        self._registrations: dict[str, str] = {}
        """Dynamic registrations: id -> method."""
        self._pull_failed = False
        self._sync_lock = asyncio.Lock()
        # Set by the manager once it has counted this client's death.
        self.crash_counted = False

    # --- lifecycle ----------------------------------------------------------------
    async def start(self, wait_seconds: float) -> None:
        self.started_at = time.monotonic()
        await self.process.start()
        name = self.root.name or str(self.root)
        result = await self.process.request(
            "initialize",
            {
                "processId": os.getpid(),
                "clientInfo": {"name": CLIENT_NAME},
                "rootUri": self.root_uri,
                "rootPath": str(self.root),
                "workspaceFolders": [{"uri": self.root_uri, "name": name}],
                "capabilities": client_capabilities(),
                "initializationOptions": {},
            },
            wait_seconds,
        )
        if isinstance(result, dict):
            caps = result.get("capabilities")
            self.capabilities = caps if isinstance(caps, dict) else {}
            info = result.get("serverInfo")
            self.server_info = info if isinstance(info, dict) else {}
        encoding = self.capabilities.get("positionEncoding")
        # clangd (before positionEncoding existed) answers with "offsetEncoding".
        if encoding is None:
            encoding = self.capabilities.get("offsetEncoding")
        if encoding in ("utf-8", "utf-16", "utf-32"):
            self.encoding = encoding
        if self.server.row.ready_log_pattern:
            self._ready_pattern = re.compile(self.server.row.ready_log_pattern, re.IGNORECASE)
            self._progress[_BACKGROUND_TOKEN] = "background analysis"
        await self.process.notify("initialized", {})
        # Some servers (pyright) only start analysing once settings arrived, pulled with
        # workspace/configuration after this nudge, as editors send it.
        await self.process.notify("workspace/didChangeConfiguration", {"settings": {}})

    async def stop(self) -> None:
        await self.process.stop()

    @property
    def alive(self) -> bool:
        return self.process.alive

    # --- progress -----------------------------------------------------------------
    @property
    def busy(self) -> list[str]:
        """Titles of work-done progress that began and has not ended (indexing ...)."""
        return list(self._progress.values())

    async def wait_until_idle(self, wait_seconds: float) -> bool:
        """True when no progress is running (now, or within wait_seconds)."""
        deadline = time.monotonic() + wait_seconds
        while self._progress and self.alive:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._progress_changed.clear()
            try:
                await asyncio.wait_for(self._progress_changed.wait(), remaining)
            except TimeoutError:
                return not self._progress
        return not self._progress

    def _on_progress(self, params: Json) -> None:
        if not isinstance(params, dict):
            return
        token, value = params.get("token"), params.get("value")
        if not isinstance(value, dict) or isinstance(token, (dict, list)):
            return
        if isinstance(token, str) and token.startswith(REQUEST_TOKEN_PREFIX):
            return  # progress of our own request, not background indexing
        kind = value.get("kind")
        if kind == "begin":
            self._progress[token] = str(value.get("title") or value.get("message") or token)
            self.progress_epoch += 1
        elif kind == "end":
            self._progress.pop(token, None)
        self._progress_changed.set()

    # --- server -> client -----------------------------------------------------------
    async def _on_request(self, method: str, params: Json) -> Json:
        if method == "workspace/configuration":
            items = params.get("items", []) if isinstance(params, dict) else []
            settings: Mapping[str, object] = self.server.row.settings
            return [settings.get(str(item.get("section")), None) for item in items]
        if method == "window/workDoneProgress/create":
            return None
        if method == "client/registerCapability":
            for registration in _dicts((params or {}).get("registrations")):
                self._registrations[str(registration.get("id"))] = str(registration.get("method"))
            self._diagnostics_changed.set()  # a waiter for pushed diagnostics may pull now
            return None
        if method == "client/unregisterCapability":
            # The field's name is misspelled in the LSP specification itself.
            for registration in _dicts((params or {}).get("unregisterations")):
                self._registrations.pop(str(registration.get("id")), None)
            return None
        if method == "window/showMessageRequest":
            log.info("%s asks: %s", self.name, (params or {}).get("message"))
            return None
        if method == "workspace/workspaceFolders":
            return [{"uri": self.root_uri, "name": self.root.name or str(self.root)}]
        if method == "workspace/applyEdit":
            return {"applied": False, "failureReason": "toolhost does not apply server edits"}
        if method == "window/showDocument":
            return {"success": False}
        if method.endswith("/refresh"):
            if method == "workspace/diagnostic/refresh":
                self._diagnostics.clear()
            return None
        raise ResponseError(METHOD_NOT_FOUND, f"toolhost does not handle {method}")

    def _on_notification(self, method: str, params: Json) -> None:
        if method == "$/progress":
            self._on_progress(params)
        elif method == "textDocument/publishDiagnostics" and isinstance(params, dict):
            uri = params.get("uri")
            diagnostics = params.get("diagnostics")
            if isinstance(uri, str) and isinstance(diagnostics, list):
                version = params.get("version")
                self._diagnostics_sequence += 1
                self._diagnostics[normalize_uri(uri)] = PublishedDiagnostics(
                    version if isinstance(version, int) else None,
                    diagnostics,
                    self._diagnostics_sequence,
                )
                self._diagnostics_changed.set()
        elif method in ("window/logMessage", "window/showMessage") and isinstance(params, dict):
            message = str(params.get("message"))
            log.debug("%s: %s", self.name, message)
            if self._ready_pattern is not None and self._ready_pattern.search(message):
                self._ready_pattern = None
                self._progress.pop(_BACKGROUND_TOKEN, None)
                self._progress_changed.set()

    @property
    def name(self) -> str:
        return Path(self.server.command[0]).name

    # --- requests -----------------------------------------------------------------
    async def request(self, method: str, params: Json, wait_seconds: float) -> Json:
        """A request, retried while the server says its content was modified or it
        cancelled the request itself (both mean: ask again)."""
        self.last_used = time.monotonic()
        if isinstance(params, dict) and method.startswith("textDocument/"):
            # Our own token: the server reports this request's progress with it (instead of
            # creating one), which tells it apart from background indexing.
            self._request_tokens += 1
            params = {**params, "workDoneToken": f"{REQUEST_TOKEN_PREFIX}{self._request_tokens}"}
        attempts = 4
        for attempt in range(attempts):
            try:
                return await self.process.request(method, params, wait_seconds)
            except ResponseError as exc:
                if exc.code not in (CONTENT_MODIFIED, SERVER_CANCELLED) or attempt == attempts - 1:
                    raise
                await asyncio.sleep(0.1 * (attempt + 1))
        raise AssertionError("unreachable")

    # --- documents ----------------------------------------------------------------
    async def sync(self, path: Path, text: str, language_id: str) -> OpenDocument:
        """didOpen before the first request on a file; didChange (full text) when the text
        differs from what the server has."""
        uri = path_to_uri(path)
        async with self._sync_lock:
            now = time.monotonic()
            document = self.documents.get(uri)
            if document is None:
                document = OpenDocument(uri, language_id, 1, text, now, self._diagnostics_sequence)
                self.documents[uri] = document
                await self.process.notify(
                    "textDocument/didOpen",
                    {
                        "textDocument": {
                            "uri": uri,
                            "languageId": language_id,
                            "version": 1,
                            "text": text,
                        }
                    },
                )
            elif document.text != text:
                document.version += 1
                document.text = text
                document.sync_sequence = self._diagnostics_sequence
                await self.process.notify(
                    "textDocument/didChange",
                    {
                        "textDocument": {"uri": uri, "version": document.version},
                        "contentChanges": [{"text": text}],
                    },
                )
            document.last_used = now
            self.last_used = now
            return document

    async def close_idle_documents(self, idle_seconds: float) -> None:
        cutoff = time.monotonic() - idle_seconds
        async with self._sync_lock:
            for uri, document in list(self.documents.items()):
                if document.last_used < cutoff:
                    del self.documents[uri]
                    self._diagnostics.pop(uri, None)
                    await self.process.notify(
                        "textDocument/didClose", {"textDocument": {"uri": uri}}
                    )

    # --- diagnostics --------------------------------------------------------------
    @property
    def pulls_diagnostics(self) -> bool:
        if self._pull_failed:
            return False
        return bool(self.capabilities.get("diagnosticProvider")) or (
            "textDocument/diagnostic" in self._registrations.values()
        )

    async def diagnostics(
        self, document: OpenDocument, wait_seconds: float, settle: float
    ) -> list[Json] | None:
        """Diagnostics for the document's current version; None if none came in time.

        Pull when the server offers it; otherwise wait for pushed ones -- switching to pull
        if the server registers it meanwhile (pyright does so only after its settings)."""
        deadline = time.monotonic() + wait_seconds
        while True:
            if self.pulls_diagnostics:
                try:
                    report = await self.request(
                        "textDocument/diagnostic",
                        {"textDocument": {"uri": document.uri}},
                        max(1.0, deadline - time.monotonic()),
                    )
                    items = report.get("items") if isinstance(report, dict) else None
                    return list(items) if isinstance(items, list) else []
                except ResponseError as exc:
                    if exc.code != METHOD_NOT_FOUND:
                        raise
                    self._pull_failed = True
            try:
                return await self._pushed_diagnostics(
                    document, max(0.0, deadline - time.monotonic()), settle
                )
            except _PullOffered:
                continue

    async def _pushed_diagnostics(
        self, document: OpenDocument, wait_seconds: float, settle: float
    ) -> list[Json] | None:
        """Wait for publishDiagnostics of this version (or, from servers that send no
        version, the first publish after the last sync), then let further publishes for
        the same version settle (servers send syntax, then semantic results)."""
        deadline = time.monotonic() + wait_seconds
        version = document.version
        settled_at: float | None = None
        last_sequence = -1
        while self.alive:
            published = self._diagnostics.get(document.uri)
            current = published is not None and (
                published.version == version
                or (published.version is None and published.sequence > document.sync_sequence)
            )
            now = time.monotonic()
            if not current and self.pulls_diagnostics:
                raise _PullOffered
            if current and published is not None:
                if published.sequence != last_sequence:
                    last_sequence = published.sequence
                    settled_at = now + settle
                if settled_at is not None and now >= settled_at:
                    return list(published.diagnostics)
            wait_until = min(deadline, settled_at) if settled_at is not None else deadline
            if now >= deadline:
                return list(published.diagnostics) if current and published else None
            self._diagnostics_changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._diagnostics_changed.wait(), max(0.0, wait_until - now))
        return None


class _PullOffered(Exception):
    """The server registered pull diagnostics while we waited for pushed ones."""


def _dicts(value: Json) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
