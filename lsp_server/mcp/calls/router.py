"""Which runtime serves an MCP call: the editor's (attached) or a local one.

`--attach auto` attaches when an editor's toolhost serves the root and falls back to a
local runtime when it goes away (the next result says so, once); `never` is always local;
`require` refuses calls rather than run them anywhere but in the editor.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lsp_server.attach import attach_client, attach_records, wire
from lsp_server.attach.attach_client import EditorRuntime, ProgressCallback
from lsp_server.core.errors import ATTACH_LOST, ATTACH_UNAVAILABLE, BROAD_ROOT
from lsp_server.mcp.calls.results import refusal, to_mcp
from lsp_server.runtime.context import Caller, Elicit
from lsp_server.runtime.sessions.activity import clean_name

if TYPE_CHECKING:
    from lsp_server.config.broad_roots import BroadRoot
    from lsp_server.runtime.dispatch import Runtime
    from lsp_server.runtime.lifecycle import Lifecycle
    from lsp_server.runtime.progress import ProgressSender

log = logging.getLogger(__name__)

AttachMode = Literal["auto", "never", "require"]

# Builds the local runtime, given where it reports progress.
LocalFactory = Callable[["ProgressSender"], tuple["Runtime", "Lifecycle"]]


class CallRouter:
    def __init__(
        self,
        attach_folder: Path,
        root: Path,
        mode: AttachMode,
        session: str,
        surface: str,
        local_factory: LocalFactory,
        refused: BroadRoot | None = None,
    ) -> None:
        self.attach_folder = attach_folder
        self.refused = refused
        """The root is no workspace (broad_roots.py): every call is refused, none runs."""
        self.root = root
        self.mode = mode
        self.session = session
        self.surface = surface
        self._local_factory = local_factory
        self.local: Runtime | None = None
        self.lifecycle: Lifecycle | None = None
        self.editor: EditorRuntime | None = None
        self._tried_attach = False
        self._notes: list[str] = []
        self._tokens = itertools.count(1)
        self._progress: dict[str, ProgressCallback] = {}

    @property
    def serving(self) -> str:
        if self.editor is not None:
            return f"editor (pid {self.editor.record.pid}, session {self.editor.session})"
        return "local"

    async def connect(self, client: dict[str, str]) -> None:
        """Attach once, at the first call (the MCP client's name is known by then)."""
        if self._tried_attach or self.mode == "never":
            return
        self._tried_attach = True
        self.editor = await attach_client.attach(
            self.attach_folder, self.root, client, self.session or None
        )
        if self.editor is not None:
            log.info("attached to %s as %s", self.editor.label, self.editor.session)

    async def call(
        self,
        name: str,
        arguments: Any,
        on_progress: ProgressCallback | None,
        client: dict[str, str],
        connection: str = "",
        elicit: Elicit | None = None,
    ) -> dict[str, Any]:
        """`connection`: the toolhost session of this MCP connection when one server has
        several (Streamable HTTP); a --session name wins, an attached editor keeps one.
        `elicit`: the client's approval form for this call, when it can show one (a local
        runtime asks through it; an attached editor asks its own user)."""
        if self.refused is not None:  # before attaching or building anything over the root
            refused = self.refused
            return refusal(BROAD_ROOT, refused.cause, refused.recovery("mcp"), self.serving)
        await self.connect(client)
        payload: dict[str, Any] = {"name": name, "arguments": arguments, "surface": self.surface}
        if self.editor is not None and self.editor.lost is not None:
            gone = self._editor_gone(self.editor, self.editor.lost)
            if gone is not None:
                return gone
        if self.editor is not None:
            editor = self.editor
            try:
                result = await editor.call(payload, on_progress)
                return to_mcp(result, self._take_notes(), self.serving)
            except wire.ConnectionLost as lost:
                return self._editor_gone(editor, str(lost), during_call=True) or {}
        if self.mode == "require":
            return refusal(
                ATTACH_UNAVAILABLE,
                f"no editor's toolhost serves {self.root} (toolhost mcp --attach require)",
                "open the workspace in an editor with the toolhost plugin, or start toolhost "
                "mcp with --attach auto to use a local runtime",
                self.serving,
            )
        caller = Caller(client=client["name"], elicit=elicit)
        result = await self._call_local(payload, on_progress, connection, caller)
        return to_mcp(result, self._take_notes(), self.serving)

    def _editor_gone(
        self, editor: EditorRuntime, why: str, during_call: bool = False
    ) -> dict[str, Any] | None:
        """Forget the editor. A refusal to return, or None: go on in a local runtime."""
        self.editor = None
        if self.mode == "require":
            return refusal(
                ATTACH_LOST,
                f"{editor.label} went away ({why}); nothing else runs calls with --attach require",
                "reopen the editor, then restart this MCP server",
                self.serving,
            )
        self._notes.append(
            f"[toolhost: {editor.label} went away; calls now run in a local runtime, which "
            "does not see the editor's unsaved buffers: read files again before editing]"
        )
        if not during_call:
            return None
        return refusal(
            ATTACH_LOST,
            f"{editor.label} went away during this call; it may or may not have run. "
            + "\n".join(self._take_notes()),
            "read the files it touches again, then repeat it if needed",
            self.serving,
        )

    def _take_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    async def _call_local(
        self,
        payload: dict[str, Any],
        on_progress: ProgressCallback | None,
        connection: str,
        caller: Caller,
    ) -> dict[str, Any]:
        runtime = self._local_runtime()
        params = wire.call_params(payload)
        params.session = self.session or connection or own_session(caller.client)
        token = None
        if on_progress is not None:
            token = f"p{next(self._tokens)}"
            self._progress[token] = on_progress
            params.work_done_token = token
        try:
            result = await runtime.call(params, caller=caller)
        finally:
            if token is not None:
                self._progress.pop(token, None)
        unstructured: dict[str, Any] = wire.result_converter().unstructure(result)
        return unstructured

    def editor_expected(self) -> bool:
        """An editor's toolhost has a live record for the root (the first call attaches)."""
        return bool(attach_records.find_records(self.attach_folder, self.root))

    def warm_local(self) -> None:
        """Build the local runtime before the first call needs it."""
        if self.refused is None:
            self._local_runtime()

    def _local_runtime(self) -> Runtime:
        if self.local is None:
            self.local, self.lifecycle = self._local_factory(self._send_progress)
        return self.local

    def _send_progress(self, token: str | int, value: dict[str, Any]) -> None:
        callback = self._progress.get(str(token))
        if callback is not None:
            callback(value)

    def status(self) -> dict[str, Any]:
        return {"serving": self.serving, "attach": self.mode, "root": str(self.root)}

    async def close(self) -> None:
        if self.editor is not None:
            await self.editor.close()
        if self.lifecycle is not None:
            await self.lifecycle.shutdown()


def own_session(client: str | None) -> str:
    """The session of an agent on a toolhost of its own: `mcp:<its client name>`, as when
    attached, so two agents' processes on one folder keep their calls apart (checkpoints,
    reverts and the editors' views go by session); `mcp` for a client without a name."""
    name = clean_name(client)
    return f"mcp:{name.replace('/', ' ').replace('#', ' ')}" if name else "mcp"
