"""What runs `toolhost mcp`'s tool calls: the tool registry and the call router (the editor's
runtime or a local one), made without the MCP SDK, so that the front answers a tools/call
as soon as they are built, whether or not the SDK has loaded (mcp/stdio/fast.py). The SDK's
handlers (mcp/server.py) use the same object; a call goes through mcp/calls/call_path.py.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lsp_server.checkpoints.early_start import EarlyStart
    from lsp_server.config.broad_roots import BroadRoot
    from lsp_server.core.contract import Registry, Surface
    from lsp_server.home.dirs import Dirs
    from lsp_server.mcp.calls.input_required import RoundTrips
    from lsp_server.mcp.calls.local import Approvals
    from lsp_server.mcp.calls.router import AttachMode, CallRouter
    from lsp_server.runtime.dispatch import Runtime
    from lsp_server.runtime.lifecycle import Lifecycle
    from lsp_server.runtime.progress import ProgressSender

log = logging.getLogger(__name__)


class Calls:
    """The registry and the router, made on first use or by `warm`."""

    def __init__(
        self,
        root: Path,
        surface: Surface,
        session: str,
        attach: AttachMode,
        approvals: Approvals | None = None,
    ) -> None:
        self.root = root
        self.surface = surface
        self.session = session
        self.attach = attach
        self.approvals = approvals
        self._building = threading.Lock()  # the listing's thread and the warm-up's: one build
        self._router: CallRouter | None = None
        self._routing = threading.Lock()  # the warm-up's thread and a call: one router
        self._rounds: RoundTrips | None = None
        self._warming: asyncio.Future[None] | None = None
        self._early: EarlyStart | None = None
        self._early_taken = False
        self._early_lock = threading.Lock()  # the warm-up's thread and the runtime's build

    def registry(self) -> Registry:
        from lsp_server.tools.registry import build_registry  # cached once per process

        with self._building:
            return build_registry()

    def knows(self, name: str) -> bool:
        """A tool any surface has (dispatch finds a full or minimal tool from every surface)."""
        registry = self.registry()
        return registry.get(name, "full") is not None or registry.get(name, "minimal") is not None

    def unknown(self, name: str, result: dict[str, Any]) -> bool:
        """Whether `result` (an MCP result) answers a call of a tool that does not exist: the
        runtime that ran it refused it as unknown_tool, or none ran it (the editor is gone)
        and this one's registry does not know it. The registry is not built for a call any
        runtime ran (an attached front imports no tool)."""
        if not result.get("isError"):
            return False  # the common case, before any import
        from lsp_server.core.errors import ATTACH_LOST, ATTACH_UNAVAILABLE, UNKNOWN_TOOL

        structured = result.get("structuredContent")
        code = structured.get("code") if isinstance(structured, dict) else None
        if code == UNKNOWN_TOOL:
            return True
        return code in (ATTACH_LOST, ATTACH_UNAVAILABLE) and not self.knows(name)

    def router(self) -> CallRouter:
        with self._routing:
            return self._router or self._make_router()

    def _make_router(self) -> CallRouter:
        from lsp_server.home.dirs import Dirs
        from lsp_server.mcp.calls.router import CallRouter

        root, dirs, approvals = self.root, Dirs.from_environment(), self.approvals

        def build_local(progress: ProgressSender) -> tuple[Runtime, Lifecycle]:
            from lsp_server.mcp.calls.local import build_local_runtime  # not when attached

            return build_local_runtime(root, dirs, progress, approvals, self._take_early())

        self._router = CallRouter(
            dirs.attach_folder,
            root,
            self.attach,
            self.session,
            self.surface,
            build_local,
            _refused(root, dirs),  # in the warm-up's thread, before any call needs the router
        )
        return self._router

    def rounds(self) -> RoundTrips:
        """2026-07-28's calls waiting on an approval form: one set for the connection, as a
        call the front ran (mcp/stdio/fast.py) is resumed through the SDK's handler (server.py)."""
        if self._rounds is None:
            from lsp_server.mcp.calls.input_required import RoundTrips

            self._rounds = RoundTrips()
        return self._rounds

    def ready(self) -> asyncio.Future[None]:
        """The warm-up, started by the first to ask (shield it: one waiter's cancellation
        must not stop it for the others)."""
        if self._warming is None:
            self._warming = asyncio.ensure_future(self._warm())
        return self._warming

    async def warm(self) -> None:
        await self.ready()

    async def _warm(self) -> None:
        """Ready what the first tools/call needs, in a thread (the loop keeps answering): the
        router, then, unless an editor's toolhost will run the calls, the registry and the
        local runtime's modules, and the local runtime. Attached, the first call waits for
        nothing else (the editor's runtime is warm). A failure is left for the first call."""
        try:
            router = await asyncio.to_thread(self.router)
            if self.attach == "require" or (self.attach == "auto" and router.editor_expected()):
                return
            await asyncio.to_thread(self._start_early, router.refused is None)
            await asyncio.to_thread(self._import_local)
            router.warm_local()
        except Exception:
            log.debug("warming up failed; the first call builds what it needs", exc_info=True)

    def _start_early(self, served: bool) -> None:
        """The layers and the checkpoints of the local runtime, before the rest of its
        modules is imported (checkpoints/early_start.py); not for a root no face serves."""
        from lsp_server.checkpoints.early_start import start_early
        from lsp_server.home.dirs import Dirs

        with self._early_lock:
            if served and not self._early_taken and self._early is None:
                self._early = start_early([self.root], Dirs.from_environment())

    def _take_early(self) -> EarlyStart | None:
        """What `_start_early` started, for the one runtime built (None: it did not run)."""
        with self._early_lock:
            early, self._early, self._early_taken = self._early, None, True
            return early

    def _import_local(self) -> None:
        from lsp_server.attach import wire
        from lsp_server.mcp.calls import local

        del local
        self.registry()
        from lsp_server.protocol import CallResult

        wire.result_converter().get_unstructure_hook(CallResult)  # made here, not on a call

    async def close(self) -> None:
        early = self._take_early()
        if early is not None:  # (no runtime was built to stop it)
            await asyncio.to_thread(early.close)
        if self._router is not None:
            await self._router.close()


def _refused(root: Path, dirs: Dirs) -> BroadRoot | None:
    """A root no face serves (a home folder, `/` ...), checked once before anything reads it:
    said on stderr (MCP clients keep it in their server log) and in every call's result."""
    from lsp_server.config.broad_roots import refused_root

    refused = refused_root([root], dirs)
    if refused is not None:
        log.warning("%s", refused.message("mcp"))
    return refused
