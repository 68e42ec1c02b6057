"""Editor sessions of their own (`sessions.isolated`): at its first toolhost/call, a session
named there gets a git worktree of the live tree (tools/session/worktree.py: HEAD plus
everyone's uncommitted changes) and a runtime over it, built as the editor's own is
(approvals, progress and the activity view go to the editor). Its calls run there until
its agent brings the change back with use_capability `workspace:apply`.

The editor's job view asks for a job by its id under a session of its own: a job tool
whose job is not the main runtime's goes to the isolated runtime that has it (each numbers
its jobs from a range of its own).
"""

from __future__ import annotations

import copy
import logging
import os
from typing import TYPE_CHECKING

import anyio

from lsp_server.core import errors

if TYPE_CHECKING:
    from lsp_server.protocol import CallParams, CallResult
    from lsp_server.runtime.dispatch import Runtime
    from lsp_server.runtime.lifecycle import Lifecycle
    from lsp_server.server.server import ToolhostServer

log = logging.getLogger(__name__)

JOB_TOOLS = frozenset({"job_output", "job_kill", "job_input"})
JOB_NUMBERS = 100_000
"""Each isolated runtime numbers its jobs from its own multiple of this."""


class NoWorktree(Exception):
    """A session named in sessions.isolated whose worktree cannot be made: `result` is the
    call's refusal (the agent reads why)."""

    def __init__(self, result: CallResult) -> None:
        super().__init__(result)
        self.result = result


class IsolatedSessions:
    def __init__(self, server: ToolhostServer) -> None:
        self._server = server
        self._runtimes: dict[str, tuple[Runtime, Lifecycle]] = {}
        self._lock = anyio.Lock()

    async def route(self, params: CallParams, main: Runtime) -> Runtime:
        """The runtime `params` runs in (NoWorktree: its session's cannot be made)."""
        if params.name in JOB_TOOLS and (owner := self._job_owner(params, main)) is not None:
            return owner
        session = params.session or "default"
        wanted = main.config.sessions.isolated
        if session not in wanted and "*" not in wanted:
            return main
        async with self._lock:
            known = self._runtimes.get(session)
            if known is not None:
                return known[0]
            try:
                opened = await self._open(main, len(self._runtimes) + 1)
            except (OSError, ValueError) as exc:
                raise NoWorktree(_refused(params, session, str(exc))) from exc
            self._runtimes[session] = opened
            return opened[0]

    def _job_owner(self, params: CallParams, main: Runtime) -> Runtime | None:
        from lsp_server.shell.jobs import JobManager

        job_id = (params.arguments or {}).get("job_id")
        if not isinstance(job_id, str) or main.services.get(JobManager).get(job_id) is not None:
            return None
        for runtime, _ in self._runtimes.values():
            if runtime.services.get(JobManager).get(job_id) is not None:
                return runtime
        return None

    async def _open(self, main: Runtime, number: int) -> tuple[Runtime, Lifecycle]:
        from lsp_server import compose
        from lsp_server.shell.jobs import JobManager
        from lsp_server.tools.session import worktree

        server = self._server
        try:
            made = await anyio.to_thread.run_sync(
                worktree.create, main.workspace.roots[0], server.dirs.state
            )
        except worktree.IsolationError as exc:
            raise ValueError(str(exc)) from None
        loaded = copy.copy(server.config_state.loaded)
        if loaded is not None:  # each session's first result says where it works
            loaded.face_notice = worktree.notice(made)
        opened = compose.open_runtime(
            [made.root], server.dirs, loaded=loaded, editor=server.editor_link()
        )
        await opened.lifecycle.start()
        opened.runtime.services.get(JobManager).number_from(number * JOB_NUMBERS)
        log.warning(
            "session works in %s, a git worktree of %s (remove it when done: git -C %s "
            "worktree remove --force %s)",
            made.root,
            made.source,
            made.source,
            made.top,
        )
        return opened.runtime, opened.lifecycle

    async def close(self) -> None:
        for _, lifecycle in self._runtimes.values():
            await lifecycle.shutdown()
        self._runtimes.clear()


def _refused(params: CallParams, session: str, why: str) -> CallResult:
    from lsp_server.protocol import ErrorInfo
    from lsp_server.runtime.results.call_records import refused_before_start

    error = ErrorInfo(
        code=errors.ISOLATION_FAILED,
        message=f"session {session} is isolated (sessions.isolated) but has no worktree: {why}",
        recovery="open the workspace inside a git repository with a commit, or take the "
        "session out of sessions.isolated",
    )
    return refused_before_start(params.name, params.call_id or f"c-{os.urandom(6).hex()}", error)
