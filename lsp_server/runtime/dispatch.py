"""THE choke point: every tool call, from any client, passes through Runtime.call.

resolve tool -> validate -> resolve and confine paths -> lock written files -> run ->
approve (writers: with the diff of their plan) -> publish -> bound output -> audit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.config.tree import Config
from lsp_server.core import errors
from lsp_server.core.client import ClientBridge, NoClient
from lsp_server.core.contract import ContractEntry, Registry, Surface
from lsp_server.core.errors import ToolError
from lsp_server.core.tool_output import ToolOutput, WritePlan
from lsp_server.fs.workspace import Workspace
from lsp_server.protocol import CallParams, CallResult, DidCallParams
from lsp_server.runtime import approval_step
from lsp_server.runtime.approvals.verdicts import Approver
from lsp_server.runtime.context import NOBODY, Caller, Services, ToolContext
from lsp_server.runtime.deadlines import CallDeadlines
from lsp_server.runtime.file_service import DocumentSource, FileService
from lsp_server.runtime.progress import Progress, ProgressSender
from lsp_server.runtime.results import held_reports
from lsp_server.runtime.results.call_records import (
    CallState,
    call_meta,
    call_record,
    digest_of,
    failure,
    internal_error,
    success,
    unknown_record,
    unknown_tool,
    with_notice,
)
from lsp_server.runtime.sessions.activity import Writer
from lsp_server.runtime.sessions.observations import FileLocks
from lsp_server.runtime.sessions.session import Session, SessionFolders, SessionStore
from lsp_server.runtime.storm import StormBreaker
from lsp_server.runtime.validation import Placement, Validators
from lsp_server.secrets.known import SecretValues
from lsp_server.secrets.write_back import explain_not_found, require_no_new_placeholder

log = logging.getLogger(__name__)

# What listeners (audit log, didCall, index refresh) learn about each finished call: the
# toolhost/didCall message itself.
CallListener = Callable[[DidCallParams], None]


class Runtime:
    """Built once, by lsp_server/compose.py, with everything it needs; never changed
    afterwards except through `reconfigure` (new settings from the editor)."""

    def __init__(
        self,
        registry: Registry,
        workspace: Workspace,
        config: Config,
        *,
        services: Services,
        approver: Approver,
        client: ClientBridge | None = None,
        documents: DocumentSource | None = None,
        progress_sender: ProgressSender | None = None,
        listeners: Sequence[CallListener] = (),
        state_dir: Path | None = None,
        session_folders: SessionFolders | None = None,
        notice: str | None = None,
    ) -> None:
        self.registry = registry
        self.workspace = workspace
        self.config = config
        self.client: ClientBridge = client or NoClient()
        self.approver = approver
        self.services = services
        self.state_dir = state_dir
        self.validators = Validators()
        self.locks = FileLocks()
        self.deadlines = CallDeadlines()
        cwd = workspace.roots[0] if workspace.roots else Path.cwd()
        spill = state_dir / "results" if state_dir else None
        self.sessions = SessionStore(cwd, config.limits.stored_results, spill, session_folders)
        self.listeners: tuple[CallListener, ...] = tuple(listeners)
        self.documents: DocumentSource | None = documents
        self.progress_sender = progress_sender
        # Known secret values, replaced by placeholders in every result (lsp_server/secrets).
        self.secrets = SecretValues.of_server(services, workspace, config.shell)
        self.notice = notice  # heads each session's first result (a managed file failed closed)
        self._built = True

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_built", False):
            raise AttributeError(
                f"Runtime.{name} cannot change after the runtime is built: compose.py gives a "
                "runtime everything through its constructor (new settings: reconfigure())"
            )
        object.__setattr__(self, name, value)

    def reconfigure(self, config: Config, problems: list[str]) -> None:
        """New settings (workspace/configuration arrived or changed): policy and limits
        follow, in place, for every later call; workspace roots stay as they were at start."""
        self.config.policy = config.policy
        self.config.limits = config.limits
        self.approver.reconfigure(config.policy, problems)

    def validated(
        self, entry: ContractEntry, arguments: Any, placement: Placement
    ) -> dict[str, Any]:
        """The arguments checked against the entry's schema; schema_mismatch otherwise."""
        args, failure = self.validators.validate(entry, arguments, placement)
        if failure is not None:
            raise ToolError(
                errors.SCHEMA_MISMATCH,
                failure.feedback,
                "fix the listed parameters and call again",
                details={
                    "signature": failure.signature,
                    "violations": [v.as_dict() for v in failure.violations],
                },
            )
        return args

    def checkpoints(self) -> Checkpoints | None:
        try:
            return self.services.get(Checkpoints)
        except LookupError:
            return None

    def files_for(self, session: Session, caller: Caller = NOBODY, tool: str = "") -> FileService:
        writer = Writer(session.activity, session.id, session.agent, tool)  # writes by whom
        limits, documents, seen = self.config.limits, self.documents, session.observations
        return FileService(self.workspace, seen, limits, documents, caller, writer)

    # -- the call ------------------------------------------------------------------

    async def call(
        self, params: CallParams, placement: Placement = "root", caller: Caller = NOBODY
    ) -> CallResult:
        """`caller`: who the call is for, as the face knows them (runtime/context.py)."""
        started = time.monotonic()
        call_id = params.call_id or f"c-{os.urandom(6).hex()}"  # as uuid4().hex[:12], cheaper
        agent = caller.client or self.client.features.name  # the agent: MCP's, the editor's
        session = self.sessions.get(params.session or "default", agent)
        session.call_count += 1
        if session.surface is None and params.surface is not None:
            session.surface = params.surface
        surface = _surface(params.surface or session.surface)
        # A name on one surface only is found from any (minimal's `read`, full's `ls`).
        tool = self.registry.get(params.name, surface) or self.registry.get(
            params.name, "full" if surface == "minimal" else "minimal"
        )
        if tool is None:
            unknown = self.unknown_tool(params, call_id, surface, started)
            self._break_storm(session, params, call_id, unknown, f"unknown_tool:{params.name}")
            self._emit(unknown_record(params, session.id, unknown))
            with_notice(unknown, self.notice if session.call_count == 1 else None)
            return unknown
        state = CallState(call_id=call_id, tool=tool, session=session)
        try:
            with session.running(call_id, tool.name):  # in flight (toolhost/status)
                output = await self._run(params, state, placement, caller)
            result = self._success(state, output, started)
        except ToolError as exc:
            result = self._failure(state, exc, started)
        except asyncio.CancelledError:
            result = self._failure(
                state,
                ToolError(errors.CANCELLED, "the call was cancelled", "run it again if needed"),
                started,
            )
            self._notify(state, params, result)
            return result  # a cancellation is nobody's repeated mistake: no storm bookkeeping
        except OSError as exc:
            # A path given by the model that the file system refused between the checks and
            # the use (a link loop, a vanished file) is input, not a bug.
            refusal = errors.from_os_error(exc, self.workspace.relative)
            result = self._failure(state, refusal or internal_error(exc, tool.name), started)
        except Exception as exc:  # the one boundary that turns bugs into values
            result = self._failure(state, internal_error(exc, tool.name), started)
        with_notice(result, self.notice if session.call_count == 1 else None)
        error = result.error
        fallback = f"{error.code}:{tool.name}:{digest_of(state.arguments)}" if error else None
        self._break_storm(session, params, call_id, result, fallback)
        self._notify(state, params, result)
        return result

    async def call_nested(self, params: CallParams, parent: ToolContext) -> ToolOutput:
        """A call made by another tool (use_capability) for the parent's caller.

        The same path as `call`: validation (feedback placed inside `arguments`),
        confinement, approval by the TARGET's own contract, locks, publishing; the target's
        record goes to the listeners (audit, didCall). The caller bounds the output once,
        so the full text is returned here, and failures are raised as ToolError."""
        started = time.monotonic()
        session = self.sessions.get(params.session or "default")
        tool = self.registry.get(params.name, "full")
        if tool is None:
            raise ToolError(
                errors.UNKNOWN_TOOL,
                f"no tool named {params.name!r}",
                "list the capabilities with use_capability action=list",
            )
        call_id = params.call_id or f"{parent.call_id}/{tool.name}"
        state = CallState(call_id=call_id, tool=tool, session=session)
        try:
            output = await self._run(params, state, "arguments", parent.caller)
        except ToolError as exc:
            self._notify(state, params, self._failure(state, exc, started))
            exc.paths.extend(state.paths)
            raise
        record_only = CallResult(
            call_id=call_id,
            is_error=False,
            content=[],
            meta=call_meta(state, started, shown=len(output.text), total=len(output.text)),
        )
        self._notify(state, params, record_only)
        for path in state.paths:
            if path not in output.paths:
                output.paths.append(path)
        return output

    def _break_storm(
        self,
        session: Session,
        params: CallParams,
        call_id: str,
        result: CallResult,
        signature: str | None,
    ) -> None:
        """Add the convergence sentence when the same failure ends a third batch in a row."""
        if result.error is not None and result.error.signature:
            signature = result.error.signature
        batch = f"batch:{params.batch}" if params.batch else f"call:{call_id}"
        sentence = session.extension(StormBreaker).record(batch, signature)
        if sentence is None or result.error is None:
            return
        result.content[0]["text"] += "\n" + sentence
        details = result.error.details if isinstance(result.error.details, dict) else {}
        result.error.details = {**details, "convergence": sentence}

    async def _run(
        self, params: CallParams, state: CallState, placement: Placement, caller: Caller
    ) -> ToolOutput:
        ctx, write_paths = self.prepare(params, state, placement, caller)
        # A client's own confirmation replaces the prompt if it said so; deny rules still hold.
        pre_approved = params.pre_approved and self.client.features.pre_approved
        if state.tool.contract.kind != "edit":
            await self._approve(state, None, pre_approved, ctx.caller)
            await approval_step.approve_judged(self.approver, self.client.features.name, state, ctx)
        async with self.locks.hold(write_paths):
            produced = await self._run_bounded(state, ctx)
            if isinstance(produced, WritePlan):
                return await self._publish(state, ctx, produced, pre_approved)
            for path in produced.paths:
                if path not in state.paths:
                    state.paths.append(path)
            return produced

    async def _run_bounded(self, state: CallState, ctx: ToolContext) -> ToolOutput | WritePlan:
        """The tool's own work within limits.call_timeout_seconds (one timer watches every
        call's deadline: deadlines.py). A write is published after it, never cut short."""
        limit = self.config.limits.call_timeout_seconds
        deadline = self.deadlines.start(limit)
        try:
            return await state.tool.run(ctx, state.arguments)
        except asyncio.CancelledError:
            if not self.deadlines.end(deadline):
                raise  # cancelled by somebody else: the client, the server's shutdown
            raise ToolError(
                errors.TIMEOUT,
                f"{state.tool.name} did not finish within {limit:g} s "
                "(limits.call_timeout_seconds) and was stopped",
                "narrow the call (a smaller path, a shorter command), or raise "
                "limits.call_timeout_seconds",
            ) from None
        finally:
            self.deadlines.end(deadline)  # a second end does nothing

    def prepare(
        self, params: CallParams, state: CallState, placement: Placement, caller: Caller = NOBODY
    ) -> tuple[ToolContext, list[Path]]:
        """Validate the arguments and resolve and confine their paths (ToolError if not);
        returns the tool's context and the paths it will write. Shared with the preview."""
        entry = state.tool.contract
        args = self.validated(entry, params.arguments, placement)
        state.arguments = args  # before path checks: their failures need the digest too
        ctx = self._context(state, params, caller)
        write_paths: list[Path] = []
        for path_arg in entry.path_args:
            raw = args.get(path_arg.name, path_arg.default)
            if raw is None:
                continue
            if path_arg.absolute:
                _require_absolute(path_arg.name, str(raw))
            # Workspace-relative, always: the shell's folder (after `cd`) is the shell's own.
            path = self.workspace.resolve(str(raw), path_arg.access)
            ctx.paths[path_arg.name] = path
            if not path_arg.must_exist:
                # One stat: cheaper inline than a thread hop.
                ctx.existed[path_arg.name] = os.path.lexists(path)
            state.paths.append(path)
            if path_arg.access == "write":
                write_paths.append(path)
        return ctx, write_paths

    async def _publish(
        self, state: CallState, ctx: ToolContext, plan: WritePlan, pre_approved: bool
    ) -> ToolOutput:
        require_no_new_placeholder(plan.changes, self.workspace.relative)
        diff = approval_step.plan_diff(self.workspace, state, plan)
        await self._approve(state, diff, pre_approved, ctx.caller)
        return await approval_step.publish(self.checkpoints(), state, ctx, plan)

    async def _approve(self, state: CallState, diff: str | None, pre: bool, caller: Caller) -> None:
        name = self.client.features.name
        request = approval_step.approval_request(self.config, name, state, diff, pre, caller)
        await approval_step.approve(self.approver, request, state)

    def _context(self, state: CallState, params: CallParams, caller: Caller) -> ToolContext:
        token = params.work_done_token
        sender = self._send_progress if self.progress_sender is not None else None
        return ToolContext(
            tool=state.tool.contract,
            call_id=state.call_id,
            session=state.session,
            workspace=self.workspace,
            config=self.config,
            files=self.files_for(state.session, caller, state.tool.name),
            progress=Progress(token, sender, state.tool.name),
            services=self.services,
            client=self.client,
            registry=self.registry,
            runtime=self,
            caller=caller,
        )

    # -- results -------------------------------------------------------------------

    def unknown_tool(
        self, params: CallParams, call_id: str, surface: Surface, started: float
    ) -> CallResult:
        return unknown_tool(self.registry, params, call_id, surface, started)

    def _success(self, state: CallState, output: ToolOutput, started: float) -> CallResult:
        # Before bounding and storing: the paged full text holds no secret either.
        output.text = self.secrets.redact(output.text)
        return success(state, output, started, self.config.limits.max_output_chars)

    def _failure(self, state: CallState, exc: ToolError, started: float) -> CallResult:
        explain_not_found(exc, state.arguments)
        secrets = self.secrets
        exc.cause, exc.recovery = secrets.redact(exc.cause), secrets.redact(exc.recovery)
        if exc.partial_text:
            exc.partial_text = secrets.redact(exc.partial_text)
        if exc.details:
            exc.details = secrets.redact_json(exc.details)
        return failure(state, exc, started, self.config.limits.max_output_chars)

    def _send_progress(self, token: str | int, value: dict[str, Any]) -> None:
        """A progress report (a command's last line) with its secrets replaced."""
        assert self.progress_sender is not None  # only given to a Progress when set
        message = value.get("message")
        if isinstance(message, str):
            value = {**value, "message": self.secrets.redact(message)}
        self.progress_sender(token, value)

    def _notify(self, state: CallState, params: CallParams, result: CallResult) -> None:
        held_reports.report(lambda: self._emit(call_record(state, result)))

    def _emit(self, record: DidCallParams) -> None:
        """Audit, didCall, index refresh: every call is reported, unknown tools included."""
        for listener in self.listeners:
            try:
                listener(record)
            except Exception:
                log.exception("call listener failed")


def _require_absolute(name: str, raw: str) -> None:
    if not PurePosixPath(raw).is_absolute():
        raise ToolError(
            errors.INVALID_ARGUMENT,
            f"{raw!r} is not an absolute path",
            f"pass the absolute path in `{name}`",
        )


def _surface(name: str | None) -> Surface:
    return "minimal" if name == "minimal" else "core" if name == "core" else "full"
