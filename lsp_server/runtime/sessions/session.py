"""Per-session state: observations, stored results, working folder, tools' own state."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from lsp_server.runtime.sessions.activity import WorkspaceActivity, clean_name, names_its_agent
from lsp_server.runtime.sessions.observations import Observations, SeenBudget
from lsp_server.runtime.sessions.session_names import file_name
from lsp_server.runtime.sessions.stored_results import ResultStore

T = TypeVar("T")
RECENT_SECONDS = 600
"""What "changed in the last minutes" means for toolhost/status."""


class Session:
    def __init__(
        self,
        session_id: str,
        cwd: Path,
        results: ResultStore,
        seen_budget: SeenBudget | None = None,
        activity: WorkspaceActivity | None = None,
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.observations = Observations(seen_budget)
        self.results = results
        self.call_count = 0
        self.surface: str | None = None
        """The surface this session first listed or called with; later calls keep it."""
        self.agent: str | None = None
        """The agent's name, as its face knows it (MCP clientInfo, the ACP agent, the
        editor): the first one given stays."""
        self.activity = activity or WorkspaceActivity()
        """Every session's writes on this workspace (shared by the server's sessions)."""
        self.in_flight: dict[str, tuple[str, float]] = {}
        """The calls running now: call id -> (tool, started at)."""
        self._extensions: dict[type[Any], Any] = {}

    def name_agent(self, agent: str | None) -> None:
        if self.agent is None:
            self.agent = clean_name(agent)

    @contextmanager
    def running(self, call_id: str, tool: str) -> Iterator[None]:
        """The call is in flight for the block (toolhost/status, workspace:activity)."""
        self.in_flight[call_id] = (tool, time.time())
        try:
            yield
        finally:
            self.in_flight.pop(call_id, None)

    def live_status(self) -> dict[str, Any]:
        """Who this session is and what it is doing now (workspace:activity)."""
        return {
            "session": self.id,
            "agent": self.agent,
            "calls": self.call_count,
            "inFlight": [
                {"callId": call_id, "tool": tool, "since": since}
                for call_id, (tool, since) in self.in_flight.items()
            ],
        }

    def who(self) -> str:
        """`session codex-1 (codex)`: as other sessions' refusals name it."""
        agent = f" ({self.agent})" if not names_its_agent(self.id, self.agent) else ""
        return f"session {clean_name(self.id) or '?'}{agent}"

    def extension(self, kind: type[T]) -> T:
        """Per-session state owned by a tool module, created on first use with kind()."""
        if kind not in self._extensions:
            self._extensions[kind] = kind()
        value: T = self._extensions[kind]
        return value

    def extensions(self) -> list[Any]:
        return list(self._extensions.values())

    def status(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "id": self.id,
            "agent": self.agent,
            "cwd": str(self.cwd),
            "calls": self.call_count,
            "inFlight": self.live_status()["inFlight"],
            # The files it changed in the last minutes (sessions/activity.py).
            "changedFiles": sorted(
                self.activity.recent(RECENT_SECONDS)
                .get((self.id, os.getpid()), {})
                .get("files", {})
            ),
            "observedFiles": len(self.observations),
            # What the contents kept to diff stale files cost (chars and digest bytes).
            "observedContent": self.observations.content_cost,
        }
        for ext in self._extensions.values():
            status = getattr(ext, "status", None)
            if callable(status):
                info.update(status())
        return info


class SessionFolders(Protocol):
    """Sessions kept on disk between processes (`toolhost call`: sessions/session_files.py)."""

    def results_store(self, session_id: str, max_results: int) -> ResultStore: ...

    def load(self, session: Session) -> None: ...

    def save(self, session: Session) -> None: ...


class SessionStore:
    def __init__(
        self,
        default_cwd: Path,
        max_results: int,
        spill_dir: Path | None,
        folders: SessionFolders | None = None,
        activity: WorkspaceActivity | None = None,
    ) -> None:
        self._default_cwd = default_cwd
        self._max_results = max_results
        self._spill_dir = spill_dir
        self._folders = folders
        self._sessions: dict[str, Session] = {}
        # One bound for the contents all sessions keep of what they read.
        self._seen_budget = SeenBudget()
        if activity is None:  # beside the results' folder: one log per workspace root
            state = spill_dir.parent if spill_dir is not None else None
            activity = WorkspaceActivity.for_root(state, default_cwd)
        self.activity = activity
        """Who wrote what: every session's writes (and other processes' on the root)."""
        activity.live = lambda: [s.live_status() for s in self._sessions.values()]

    def get(self, session_id: str, agent: str | None = None) -> Session:
        """The session (made on first use); `agent`: its agent's name, when the face knows."""
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = self._new(session_id)
        if agent is not None:
            session.name_agent(agent)
        return session

    def _new(self, session_id: str) -> Session:
        if self._folders is not None:
            results = self._folders.results_store(session_id, self._max_results)
            session = Session(
                session_id, self._default_cwd, results, self._seen_budget, self.activity
            )
            self._folders.load(session)
            return session
        # The id names a folder only through its encoding: `../x` stays inside.
        spill = self._spill_dir / file_name(session_id) if self._spill_dir else None
        results = ResultStore(session_id, self._max_results, spill)
        return Session(session_id, self._default_cwd, results, self._seen_budget, self.activity)

    def save(self) -> None:
        """Write every session back to its folder (sessions kept on disk only)."""
        if self._folders is not None:
            for session in self._sessions.values():
                self._folders.save(session)

    def all(self) -> list[Session]:
        return list(self._sessions.values())

    def holding(self, ref: str) -> Session | None:
        """The session that stored this result (refs are unique per server)."""
        return next((s for s in self._sessions.values() if s.results.has(ref)), None)
