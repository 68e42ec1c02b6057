"""THE composition root: the one place that builds a Runtime and installs its services.

Every face (`toolhost serve` with an editor, `toolhost acp`, `toolhost mcp`'s local runtime,
`toolhost call` and `toolhost revert`) opens its runtime with `open_runtime`: the config
layers loaded, the runtime built, its attach socket wired, and the problems to show. The
tests' helpers and the benchmarks call `build_runtime` with a Config of their own; nothing
else constructs a `Runtime` or a `Services`, and nothing changes a Runtime or its Lifecycle
after it is built (tests/project/test_composition.py).

What a runtime gets, in order:
- services: the shell sandbox (bubblewrap probed on the first command), background jobs,
  checkpoints (what writers and shell commands change), search engines (rg looked up on
  first use), the symbol index (long-lived: built in the background and told about every
  write; one shot: parses only what a query needs), the language-server manager (started
  on the first lsp_* call), and the policy service;
- the approver: the policy engine (asking the editor, else `asker`, else nobody), or a fixed
  approver given by the caller (tests, benchmarks);
- listeners, in order: the audit log (so its line is on disk before didCall goes out), the
  editor's didCall, the index refresh;
- from an editor: its bridge (requests, notifications), its open buffers, $/progress.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from lsp_server.checkpoints.early_start import EarlyStart
from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.codeintel.indexes import BuildListener, CodeIndexService
from lsp_server.config.broad_roots import own_folders, refuse_broad_roots
from lsp_server.config.layers import WORKSPACE_CONFIG_NAME, LoadedConfig, load_layers
from lsp_server.config.tree import Config
from lsp_server.config.trust import TrustStore
from lsp_server.core.client import ClientBridge
from lsp_server.core.contract import Registry
from lsp_server.fs import leftover_temps
from lsp_server.fs.workspace import Workspace
from lsp_server.home.dirs import Dirs
from lsp_server.home.private_folder import UnsafeFolder
from lsp_server.langservers.answer_log import LspAnswerLog
from lsp_server.langservers.manager import LanguageServerManager
from lsp_server.policy.approver import PolicyApprover
from lsp_server.policy.audit import AuditListener, AuditLog
from lsp_server.policy.authorizer import PolicyService
from lsp_server.policy.commands.command_paths import Places
from lsp_server.policy.planner import CommandPlanner
from lsp_server.policy.prompt import Asker
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.protocol import DidCallParams
from lsp_server.runtime.approvals.verdicts import Approver
from lsp_server.runtime.buffers.documents import EditorDocuments, OpenDocuments
from lsp_server.runtime.context import Services
from lsp_server.runtime.dispatch import CallListener, Runtime
from lsp_server.runtime.file_service import DocumentSource
from lsp_server.runtime.lifecycle import Lifecycle
from lsp_server.runtime.progress import ProgressSender
from lsp_server.runtime.sessions.session import SessionFolders
from lsp_server.sandbox.netallow import parse_allow_list
from lsp_server.sandbox.protected import protected_paths
from lsp_server.sandbox.service import SandboxService
from lsp_server.search.engines import SearchEngines
from lsp_server.secrets.askpass import AskpassBroker
from lsp_server.secrets.known import SecretValues
from lsp_server.shell.jobs import JobManager
from lsp_server.tools.registry import build_registry
from lsp_server.tools.search.glob_memory import GlobMemory

if TYPE_CHECKING:
    from lsp_server.attach.listener import AttachListener

log = logging.getLogger(__name__)


@attrs.frozen
class EditorLink:
    """What an editor connection gives the runtime (the LSP server builds one)."""

    bridge: ClientBridge
    open_documents: OpenDocuments
    send_progress: ProgressSender
    did_call: Callable[[DidCallParams], None]
    index_build_listener: BuildListener | None = None
    """Shows background index builds in the editor (when it supports work-done progress)."""


@attrs.frozen
class Opened:
    """What `open_runtime` gives a face."""

    runtime: Runtime
    lifecycle: Lifecycle
    loaded: LoadedConfig
    problems: list[str]
    """For the face to show: the layers' problems and notices (when loaded here), then the
    build's (policy rules, network entries that do not parse)."""


def open_runtime(
    roots: Sequence[Path],
    dirs: Dirs,
    *,
    loaded: LoadedConfig | None = None,
    asker: Asker | None = None,
    asker_for: Callable[[LoadedConfig], Asker | None] | None = None,
    attach: AttachListener | None = None,
    editor: EditorLink | None = None,
    long_lived: bool = True,
    registry: Registry | None = None,
    progress_sender: ProgressSender | None = None,
    session_folders: SessionFolders | None = None,
    documents: DocumentSource | None = None,
    early: EarlyStart | None = None,
) -> Opened:
    """The one way a face gets a runtime over `roots`.

    `loaded`: the layers the face has already loaded (the LSP server, with its editor's
    initializationOptions); else the layers of `roots` are loaded here, or taken from
    `early` (checkpoints/early_start.py: with checkpoints started before these imports).
    `asker` answers "ask" when no editor can; `asker_for` chooses it by the loaded layers
    (`toolhost call --yes`, `toolhost mcp --approvals`: a managed file may lock them).
    `attach`: the MCP attach socket serving this runtime: wired to the editor's approvals
    and progress, bound, closed first at shutdown and removed by the kill hooks; started by
    `lifecycle.start()` when the face is ready to serve it.
    The rest as `build_runtime`."""
    fresh = loaded is None
    if loaded is None:
        loaded = early.loaded if early else load_layers(None, roots, dirs)
    if asker_for is not None:
        asker = asker_for(loaded)  # may add a notice (a managed file's lock beat a flag)
    # The layers' problems when loaded here (a face that loaded them has shown them).
    problems = [*loaded.problems, *loaded.notices] if fresh else []
    if attach is not None:
        if editor is not None:
            editor = attrs.evolve(
                editor,
                bridge=attach.bridge(editor.bridge),
                send_progress=attach.progress_router(editor.send_progress),
            )
        progress_sender = attach.progress_router(progress_sender or _no_progress)
    runtime, lifecycle = build_runtime(
        roots,
        loaded.config,
        dirs=dirs,
        editor=editor,
        asker=asker,
        long_lived=long_lived,
        problems=problems,
        registry=registry,
        progress_sender=progress_sender,
        session_folders=session_folders,
        documents=documents,
        notice=loaded.startup_notice,
        checkpoints=early.checkpoints if early else None,
    )
    if attach is not None:
        _serve_attach(attach, runtime, lifecycle)
    return Opened(runtime, lifecycle, loaded, problems)


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
    progress_sender: ProgressSender | None = None,
    session_folders: SessionFolders | None = None,
    documents: DocumentSource | None = None,
    notice: str | None = None,
    checkpoints: Checkpoints | None = None,
) -> tuple[Runtime, Lifecycle]:
    """The runtime over `roots`, and what its owner runs at shutdown.

    `asker` answers "ask" when no editor can (the CLI's terminal prompt or --yes).
    `approver` replaces the policy engine (and its audit log) with a fixed one.
    `long_lived=False` (one `toolhost call`): no background index build (it would die with
    the process). Policy rules that do not parse go to `problems`.
    `progress_sender` reports progress without an editor (`toolhost mcp`'s local runtime).
    `session_folders` keeps sessions on disk between processes (`toolhost call`): loaded
    when a call first names one, saved first thing at shutdown.
    `documents`: the document source with no LSP editor (`toolhost acp`'s fs/*; else buffers).
    `notice` heads each session's first result (LoadedConfig.startup_notice).
    `checkpoints`: started already over the same roots and layers (early_start.py)."""
    refuse_broad_roots(roots, config.workspace.extra_roots, dirs)
    started = checkpoints.workspace if checkpoints else None  # (over the same roots)
    workspace = started or Workspace.from_config(list(roots), config.workspace)
    parts = _Parts()
    # What writers and the shell commands whose plan asks for one change (docs/CHECKPOINTS.md).
    if checkpoints is None:
        keep_out = own_folders(dirs)
        checkpoints = Checkpoints(workspace, config.checkpoints, dirs.state, keep_out=keep_out)
    # One set of known secret values for the results, the audit log and the ACP face; its
    # walk and the checkpoint watcher's share their listings.
    listings = checkpoints.watchers.listings
    parts.instances[SecretValues] = SecretValues.of(workspace, config.shell, listings)
    bridge = editor.bridge if editor else None
    sandbox = parts.sandbox(dirs)
    planner = parts.planner(config, workspace, dirs, sandbox)
    if problems is not None:  # entries of sandbox_network_allow that do not parse
        parse_allow_list(config.shell.sandbox_network_allow, problems)
    if approver is None:
        approver = parts.policy(config, workspace, dirs, bridge, asker, problems, planner)
    parts.instances[Approver] = approver  # also for workspace:apply, which writes outside
    if editor is not None:
        parts.listeners.append(editor.did_call)
    parts.jobs(config)
    parts.factories.update({SearchEngines: SearchEngines.discover, GlobMemory: GlobMemory})
    parts.index(dirs, long_lived, editor.index_build_listener if editor else None)
    parts.language_servers(config)
    if editor is not None:
        documents = EditorDocuments(editor.open_documents, editor.bridge, config.edits, workspace)
    checkpoints.documents = documents
    parts.instances[Checkpoints] = checkpoints
    # After the jobs' hook: a job killed at shutdown is recorded before the queue settles.
    parts.lifecycle.shutdown_hooks.append(lambda: checkpoints.settle(shutting_down=True))
    parts.lifecycle.shutdown_hooks.append(lambda: asyncio.to_thread(checkpoints.watchers.close))
    parts.lifecycle.status_providers["checkpoints"] = checkpoints.status
    runtime = Runtime(
        registry or build_registry(),
        workspace,
        config,
        services=parts.finish(),
        approver=approver,
        client=bridge,
        documents=documents,
        progress_sender=editor.send_progress if editor else progress_sender,
        listeners=parts.listeners,
        state_dir=dirs.state,
        session_folders=session_folders,
        notice=notice,
    )
    swept = leftover_temps.at_start(workspace.roots, dirs.state, own_folders(dirs), long_lived)
    if swept is not None:
        parts.lifecycle.status_providers["leftoverTemps"] = swept.status
    if session_folders is not None:
        parts.lifecycle.shutdown_hooks.insert(0, lambda: asyncio.to_thread(runtime.sessions.save))
    answers: LspAnswerLog = runtime.services.get(LspAnswerLog)
    parts.lifecycle.status_providers["lspAnswers"] = lambda: answers.status(
        runtime.config.lsp.provider, runtime.client.features.lsp_proxy
    )
    return runtime, parts.lifecycle


def _serve_attach(attach: AttachListener, runtime: Runtime, lifecycle: Lifecycle) -> None:
    """The attach socket serves `runtime`: started by `lifecycle.start()` (a socket that
    cannot be made leaves attach off, said in the log), closed first at shutdown (no call
    arrives while the rest stops), its record removed by the kill hooks."""
    attach.bind(runtime)

    async def start() -> None:
        try:
            await attach.start()
        except (OSError, UnsafeFolder) as exc:
            log.warning("MCP attach is off for %s: %s", runtime.workspace.roots[0], exc)

    lifecycle.start_hooks.append(start)
    lifecycle.shutdown_hooks.insert(0, attach.close)
    lifecycle.kill_hooks.append(attach.remove_now)


def _no_progress(token: str | int, value: dict[str, Any]) -> None:
    """Nobody shows the runtime's own progress (an attached call's goes over its socket)."""


@attrs.define
class _Parts:
    """What build_runtime gathers before the Runtime is constructed, one service at a time."""

    instances: dict[type[Any], Any] = attrs.Factory(dict)
    factories: dict[type[Any], Callable[[], Any]] = attrs.Factory(dict)
    listeners: list[CallListener] = attrs.Factory(list)
    lifecycle: Lifecycle = attrs.Factory(Lifecycle)

    def finish(self) -> Services:
        """The services, once all are installed (the language servers' shutdown and status
        hooks look their manager up there)."""
        services = Services(self.instances, self.factories)
        _stop_language_servers_with(services, self.lifecycle)
        return services

    def policy(
        self,
        config: Config,
        workspace: Workspace,
        dirs: Dirs,
        bridge: ClientBridge | None,
        asker: Asker | None,
        problems: list[str] | None,
        planner: CommandPlanner,
    ) -> Approver:
        """The policy service behind the approver; the audit log is the first listener."""
        trust = TrustStore(dirs.state)
        # The approval and the command see the same plan (planner.py): its classifier is
        # the policy engine's, rebuilt when the policy is reconfigured.
        policy = PolicyService(
            config.policy,
            workspace.writable_roots(),
            trust,
            problems,
            _places(workspace, dirs, config),
            planner=planner,
        )
        planner.classifier = lambda: policy.engine.classifier
        self.instances[PolicyService] = policy
        secrets: SecretValues = self.instances[SecretValues]
        self.listeners.append(AuditListener(AuditLog(dirs.state, redact=secrets.redact_known)))
        return PolicyApprover(policy, bridge, asker)

    def planner(
        self, config: Config, workspace: Workspace, dirs: Dirs, sandbox: SandboxService
    ) -> CommandPlanner:
        """One plan per shell command, for the policy, the bash tool and the checkpoints.
        Its classifier is the policy engine's once there is one (`policy`)."""
        classifier = ReadOnlyClassifier(
            config.policy.read_only_commands, None, _places(workspace, dirs, config)
        )
        planner = CommandPlanner(config, sandbox, lambda: classifier)
        self.instances[CommandPlanner] = planner
        return planner

    def sandbox(self, dirs: Dirs) -> SandboxService:
        # Probes bubblewrap on the first command, not at start. toolhost's own folders stay
        # read-only to commands where a root holds them.
        askpass = self.instances[AskpassBroker] = AskpassBroker(dirs.attach_folder)
        self.lifecycle.shutdown_hooks.append(askpass.close)  # commands' password prompts
        sandbox = SandboxService(own_folders(dirs), shared=[askpass.folder])
        self.instances[SandboxService] = sandbox
        return sandbox

    def jobs(self, config: Config) -> None:
        jobs = JobManager(config.shell.max_background_jobs)
        self.instances[JobManager] = jobs
        self.lifecycle.shutdown_hooks.append(jobs.shutdown)
        self.lifecycle.status_providers["jobs"] = jobs.status
        self.lifecycle.kill_hooks.append(jobs.kill_all_now)
        atexit.register(jobs.kill_all_now)

    def index(self, dirs: Dirs, long_lived: bool, build_listener: BuildListener | None) -> None:
        if not long_lived:
            self.factories[CodeIndexService] = lambda: CodeIndexService(
                dirs.state, background_builds=False
            )
            return
        index = CodeIndexService(dirs.state)
        if build_listener is not None:
            index.build_listeners.append(build_listener)
        self.instances[CodeIndexService] = index
        self.listeners.append(_index_refresh(index))
        self.lifecycle.status_providers["index"] = index.status
        self.lifecycle.shutdown_hooks.append(lambda: asyncio.to_thread(index.close))

    def language_servers(self, config: Config) -> None:
        """Started on the first lsp_* call; stopped at shutdown (see `finish`)."""
        self.factories[LanguageServerManager] = lambda: LanguageServerManager(config.lsp)
        self.instances[LspAnswerLog] = LspAnswerLog()


def _places(workspace: Workspace, dirs: Dirs, config: Config) -> Places:
    trust_path = TrustStore(dirs.state).path
    protected = protected_paths(config.workspace.protected_paths, config.shell.sandbox_read_only)
    return Places.of_workspace(
        workspace, dirs.user_config_file, trust_path, WORKSPACE_CONFIG_NAME, protected, dirs.state
    )


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
