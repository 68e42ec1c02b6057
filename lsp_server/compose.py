"""THE composition root: the one place that builds a Runtime and installs its services.

`toolhost serve` (with an editor), `toolhost call` (one shot, no editor), the tests' helpers
and the benchmarks all call `build_runtime`; nothing else constructs a `Runtime` or a
`Services`, and nothing changes a Runtime after it is built (tests/core/test_composition.py).

What a runtime gets, in order:
- services: the shell sandbox (bubblewrap probed on the first command), background jobs,
  search engines (rg looked up on first use), the symbol index
  (long-lived: built in the background and told about every write; one shot: parses only
  what a query needs), the language-server manager (started on the first lsp_* call), and
  the policy service;
- the approver: the policy engine (asking the editor, else `asker`, else nobody), or a fixed
  approver given by the caller (tests, benchmarks);
- listeners, in order: the audit log (so its line is on disk before didCall goes out), the
  editor's didCall, the index refresh;
- from an editor: its bridge (requests, notifications), its open buffers, $/progress.
"""

from __future__ import annotations

import asyncio
import atexit
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from lsp_server.codeintel.indexes import BuildListener, CodeIndexService
from lsp_server.config.tree import Config
from lsp_server.config.trust import TrustStore
from lsp_server.dirs import Dirs
from lsp_server.langservers.manager import LanguageServerManager
from lsp_server.policy.audit import AuditListener, AuditLog
from lsp_server.policy.authorizer import PolicyApprover, PolicyService
from lsp_server.policy.prompt import Asker
from lsp_server.protocol import DidCallParams
from lsp_server.runtime.approvals import Approver
from lsp_server.runtime.client import ClientBridge
from lsp_server.runtime.context import Services
from lsp_server.runtime.contract import Registry
from lsp_server.runtime.dispatch import CallListener, Runtime
from lsp_server.runtime.documents import EditorDocuments, OpenDocuments
from lsp_server.runtime.progress import ProgressSender
from lsp_server.runtime.workspace import Workspace
from lsp_server.sandbox.service import SandboxService
from lsp_server.search.engine import SearchEngines
from lsp_server.shell.jobs import JobManager
from lsp_server.tools.registry import build_registry
from lsp_server.tools.shell.sandboxing import plan_call

ShutdownHook = Callable[[], Awaitable[None]]
StatusProvider = Callable[[], Any]


@attrs.define
class Lifecycle:
    """What the owner must run at the end, and what toolhost/status reports."""

    shutdown_hooks: list[ShutdownHook] = attrs.Factory(list)
    # Synchronous last resorts (signals, interpreter exit): no orphaned processes.
    kill_hooks: list[Callable[[], None]] = attrs.Factory(list)
    status_providers: dict[str, StatusProvider] = attrs.Factory(dict)

    async def shutdown(self) -> None:
        for hook in self.shutdown_hooks:
            await hook()


@attrs.frozen
class EditorLink:
    """What an editor connection gives the runtime (the LSP server builds one)."""

    bridge: ClientBridge
    open_documents: OpenDocuments
    send_progress: ProgressSender
    did_call: Callable[[DidCallParams], None]
    index_build_listener: BuildListener | None = None
    """Shows background index builds in the editor (when it supports work-done progress)."""


def build_runtime(
    roots: Sequence[Path],
    config: Config,
    *,
    dirs: Dirs,
    editor: EditorLink | None = None,
    asker: Asker | None = None,
    approver: Approver | None = None,
    long_lived: bool = True,
    problems: list[str] | None = None,
    registry: Registry | None = None,
) -> tuple[Runtime, Lifecycle]:
    """The runtime over `roots`, and what its owner runs at shutdown.

    `asker` answers "ask" when no editor can (the CLI's terminal prompt or --yes).
    `approver` replaces the policy engine (and its audit log) with a fixed one.
    `long_lived=False` (one `toolhost call`): no background index build, which would die
    with the process. Policy rules that do not parse are appended to `problems`."""
    workspace = Workspace.from_config(list(roots), config.workspace)
    lifecycle = Lifecycle()
    services: dict[type[Any], Any] = {}
    factories: dict[type[Any], Callable[[], Any]] = {}
    listeners: list[CallListener] = []

    sandbox = SandboxService()  # probes bubblewrap on the first command, not at start
    services[SandboxService] = sandbox
    if approver is None:
        policy = PolicyService(
            config.policy, workspace.writable_roots(), TrustStore(dirs.state), problems
        )
        # The approval and the command see the same plan (sandboxed or not, network).
        policy.sandbox_planner = lambda arguments: plan_call(sandbox, config.shell, arguments)
        services[PolicyService] = policy
        approver = PolicyApprover(policy, editor.bridge if editor else None, asker)
        listeners.append(AuditListener(AuditLog(dirs.state)))
    if editor is not None:
        listeners.append(editor.did_call)

    jobs = JobManager(config.shell.max_background_jobs)
    services[JobManager] = jobs
    lifecycle.shutdown_hooks.append(jobs.shutdown)
    lifecycle.status_providers["jobs"] = jobs.status
    lifecycle.kill_hooks.append(jobs.kill_all_now)
    atexit.register(jobs.kill_all_now)

    factories[SearchEngines] = SearchEngines.discover

    if long_lived:
        index = CodeIndexService(dirs.state)
        if editor is not None and editor.index_build_listener is not None:
            index.build_listeners.append(editor.index_build_listener)
        services[CodeIndexService] = index
        listeners.append(_index_refresh(index))
        lifecycle.status_providers["index"] = index.status
        lifecycle.shutdown_hooks.append(lambda: asyncio.to_thread(index.close))
    else:
        factories[CodeIndexService] = lambda: CodeIndexService(dirs.state, background_builds=False)

    factories[LanguageServerManager] = lambda: LanguageServerManager(config.lsp)
    all_services = Services(services, factories)
    _stop_language_servers_with(all_services, lifecycle)

    documents = None
    if editor is not None:
        documents = EditorDocuments(editor.open_documents, editor.bridge, config.edits, workspace)
    runtime = Runtime(
        registry or build_registry(),
        workspace,
        config,
        services=all_services,
        approver=approver,
        client=editor.bridge if editor else None,
        documents=documents,
        progress_sender=editor.send_progress if editor else None,
        listeners=listeners,
        state_dir=dirs.state,
    )
    return runtime, lifecycle


def _index_refresh(index: CodeIndexService) -> CallListener:
    def on_call(record: DidCallParams) -> None:
        if record.written:
            index.files_changed([Path(p) for p in record.written])  # only notes: cheap

    return on_call


def _stop_language_servers_with(services: Services, lifecycle: Lifecycle) -> None:
    """Stop the manager's children on shutdown and list them in toolhost/status as
    `languageServers`; the manager itself exists only once an lsp_* call needed it."""

    async def stop_language_servers() -> None:
        manager = services.created(LanguageServerManager)
        if manager is not None:
            await manager.shutdown()

    def status() -> list[dict[str, Any]]:
        manager = services.created(LanguageServerManager)
        return manager.status() if manager is not None else []

    lifecycle.shutdown_hooks.append(stop_language_servers)
    lifecycle.status_providers["languageServers"] = status
