"""The runtimes of one `toolhost acp`: one per workspace root (an ACP session's `cwd`, or
`--root` when the cwd lies inside it), each opened by compose.open_runtime like every other
face's, and which ACP session runs in which. A toolhost session has the ACP session's id.

Each runtime also serves `toolhost mcp` over the attach socket (the MCP server toolhost adds
to `session/new`), so the agent's MCP calls run in the same runtime, with the same
observations, checkpoints and approvals as its fs/* and terminal/* requests."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import attrs

from lsp_server import compose
from lsp_server.acp.buffers import EditorBuffers
from lsp_server.acp.permission import PermissionAsker
from lsp_server.acp.replies import refuse
from lsp_server.attach.listener import AttachListener
from lsp_server.config.broad_roots import BROAD_ROOT, refused_root
from lsp_server.config.layers import LoadedConfig
from lsp_server.core.errors import ISOLATION_FAILED
from lsp_server.home.dirs import Dirs
from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.lifecycle import Lifecycle
from lsp_server.tools.registry import build_registry
from lsp_server.tools.session import worktree

log = logging.getLogger(__name__)


@attrs.define(eq=False)
class Served:
    root: Path
    runtime: Runtime
    lifecycle: Lifecycle
    attach: AttachListener
    buffers: EditorBuffers | None
    """The editor's own fs/*, when it declared them."""
    sessions: list[str] = attrs.Factory(list)
    """ACP sessions in this runtime, oldest first."""


async def _ready() -> None:
    return None


class Workspaces:
    def __init__(self, dirs: Dirs, root: Path | None, asker: PermissionAsker) -> None:
        self.dirs = dirs
        self.root = root
        self.asker = asker
        self._by_root: dict[Path, Served] = {}
        self._by_session: dict[str, Served] = {}
        self.problems: list[str] = []
        self.editor_fs: tuple[bool, bool] = (False, False)
        """What the editor declared: fs.readTextFile, fs.writeTextFile (set at initialize)."""
        self.isolate = False
        """`toolhost acp --isolate`: each new session works in a worktree of its own."""

    def root_for(self, cwd: Path) -> Path:
        if self.root is not None and (cwd == self.root or self.root in cwd.parents):
            return self.root
        return cwd

    async def isolated(self, cwd: Path) -> Path:
        """The new session's folder in a new worktree of its root's live tree (worktree.py):
        it and its runtime work there until the agent applies its change."""
        source = self.root_for(cwd)
        try:
            made = await anyio.to_thread.run_sync(worktree.create, source, self.dirs.state)
        except (worktree.IsolationError, OSError) as exc:
            raise refuse(
                ISOLATION_FAILED,
                f"toolhost acp --isolate: no worktree for {source}: {exc}",
                "open the session on a folder inside a git repository with a commit, or start "
                "toolhost acp without --isolate",
            ) from exc
        log.warning(
            "toolhost acp --isolate: a session works in %s, a git worktree of %s; remove it "
            "when done with: git -C %s worktree remove --force %s",
            made.root,
            source,
            source,
            made.top,
        )
        return made.root / cwd.relative_to(source)

    async def for_cwd(self, cwd: Path) -> Served:
        """The runtime serving `cwd` (built on first use)."""
        root = self.root_for(cwd)
        served = self._by_root.get(root)
        if served is None:
            served = await self._build(root)
            self._by_root[root] = served
        return served

    def bind(self, session_id: str, served: Served) -> None:
        if session_id not in served.sessions:
            served.sessions.append(session_id)
        self._by_session[session_id] = served

    def current_text(self, path: Path) -> str | None:
        """A file's text as the editor has it (an unsaved buffer), else None."""
        for served in self._by_root.values():
            buffer = served.buffers.open_document(path) if served.buffers else None
            if buffer is not None:
                return buffer.text
        return None

    def of_session(self, session_id: str) -> Served | None:
        return self._by_session.get(session_id)

    def acp_session(self, toolhost_session: str) -> str | None:
        """The ACP session a prompt of this toolhost session goes to: its own, or (for an
        attached MCP session) the newest ACP session of the same runtime."""
        if toolhost_session in self._by_session:
            return toolhost_session
        for served in self._by_root.values():
            if served.sessions and toolhost_session.startswith("mcp:"):
                return served.sessions[-1]
        return None

    async def _build(self, root: Path) -> Served:
        refused = refused_root([root], self.dirs)  # before anything reads the root
        if refused is not None:
            log.warning("%s", refused.message("acp"))
            raise refuse(BROAD_ROOT, refused.cause, refused.recovery("acp"))
        listener = AttachListener(self.dirs.attach_folder, _ready)
        reads, writes = self.editor_fs
        buffers = EditorBuffers(self.asker.editor, reads, writes) if reads else None
        isolation = await anyio.to_thread.run_sync(worktree.find, root, self.dirs.state)

        def asker_for(loaded: LoadedConfig) -> PermissionAsker:
            if isolation is not None:  # each session's first result tells the agent
                loaded.face_notice = worktree.notice(isolation)
            return self.asker

        opened = compose.open_runtime(
            [root],
            self.dirs,
            asker_for=asker_for,
            attach=listener,
            registry=build_registry("acp"),
            documents=buffers,
        )
        for problem in opened.problems:
            log.warning("configuration: %s", problem)
        await opened.lifecycle.start()  # the attach socket
        log.info("runtime for %s", root)
        return Served(root, opened.runtime, opened.lifecycle, listener, buffers)

    async def close(self) -> None:
        for served in self._by_root.values():
            await served.lifecycle.shutdown()
        self._by_root.clear()
        self._by_session.clear()

    def kill_now(self) -> None:
        for served in self._by_root.values():
            served.lifecycle.kill_now()
