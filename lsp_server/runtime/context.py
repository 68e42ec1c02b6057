"""The context a tool's run(ctx, args) receives: the only door to the runtime; and the
caller a face hands Runtime.call with the call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

if TYPE_CHECKING:
    from lsp_server.config.tree import Config
    from lsp_server.core.client import ClientBridge
    from lsp_server.core.contract import ContractEntry, Registry
    from lsp_server.core.tool_output import ToolOutput
    from lsp_server.fs.workspace import Workspace
    from lsp_server.protocol import CallParams
    from lsp_server.runtime.file_service import FileService
    from lsp_server.runtime.progress import Progress
    from lsp_server.runtime.sessions.session import Session
    from lsp_server.runtime.validation import Placement

T = TypeVar("T")

# (message, requested schema) -> (action, content): a form the caller's client shows the
# user (MCP elicitation), and the user's answer.
Elicit = Callable[[str, dict[str, Any]], Awaitable[tuple[str, dict[str, Any] | None]]]


@attrs.frozen
class Caller:
    """Who a call is for, as the face that took it knows them: given to Runtime.call with the
    call, and handed on to the tool (ToolContext.caller), to its approval and to its writes.
    A face that knows no more than the call's session gives NOBODY."""

    client: str | None = None
    """The MCP client's name (its clientInfo): what approves in its name names it."""
    elicit: Elicit | None = None
    """The client's approval form for this call (MCP elicitation), when it can show one."""
    editor_session: str | None = None
    """The editor's session whose request this call serves (ACP's fs/*: its sessionId): a
    write to a file with unsaved text in that editor goes into the editor's buffer."""


NOBODY = Caller()


class Services:
    """Long-lived helpers owned by the server (job manager, symbol index, language servers),
    looked up by type so that the runtime never imports the modules that define them.

    Filled once, by compose.py: `instances` exist already, `factories` make theirs on first
    use (a server that never greps never looks for rg). Tools only `get`."""

    def __init__(
        self,
        instances: Mapping[type[Any], Any] | None = None,
        factories: Mapping[type[Any], Callable[[], Any]] | None = None,
    ) -> None:
        self._by_type: dict[type[Any], Any] = dict(instances or {})
        self._factories: dict[type[Any], Callable[[], Any]] = dict(factories or {})

    def get(self, kind: type[T]) -> T:
        if kind not in self._by_type:
            factory = self._factories.get(kind)
            if factory is None:
                raise LookupError(f"no service of type {kind.__name__} registered")
            self._by_type[kind] = factory()
        instance: T = self._by_type[kind]
        return instance

    def created(self, kind: type[T]) -> T | None:
        """The instance if it exists already; never creates one (status, shutdown)."""
        instance: T | None = self._by_type.get(kind)
        return instance

    def all(self) -> list[Any]:
        return list(self._by_type.values())


class NestedCalls(Protocol):
    """The runtime, as a tool that calls other tools (use_capability) sees it."""

    def validated(
        self, entry: ContractEntry, arguments: Any, placement: Placement
    ) -> dict[str, Any]: ...

    async def call_nested(self, params: CallParams, parent: ToolContext) -> ToolOutput: ...


@attrs.define
class ToolContext:
    tool: ContractEntry
    call_id: str
    session: Session
    workspace: Workspace
    config: Config
    files: FileService
    progress: Progress
    services: Services
    client: ClientBridge
    registry: Registry
    runtime: NestedCalls
    caller: Caller
    """Who the call is for (Runtime.call's `caller`); a nested call's is its parent's."""
    # Path arguments of the contract, resolved to real paths and confined.
    paths: dict[str, Path] = attrs.Factory(dict)
    # Whether each path existed when the call arrived, before it waited for file locks:
    # a create that lost a race reports FS_ALREADY_EXISTS, not FS_NOT_OBSERVED.
    existed: dict[str, bool] = attrs.Factory(dict)
