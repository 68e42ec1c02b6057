"""How `toolhost serve` says that its root is no workspace (lsp_server/config/broad_roots.py): an
error notification once `initialized` arrives, every toolhost/call answered with the
`workspace.broad_root` refusal (a result, as any refused call), and every other request
that needs the runtime with a JSON-RPC error carrying the same code and recovery. No
runtime is built, so nothing reads, walks, watches or indexes the root."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from lsp_server.config.broad_roots import BROAD_ROOT, BroadRoot, refused_root
from lsp_server.home.dirs import Dirs

if TYPE_CHECKING:
    from lsp_server.protocol import CallParams, CallResult

log = logging.getLogger(__name__)

REQUEST_FAILED = -32803
"""LSP's RequestFailed: the request was well formed, the server will not do it."""


class BroadRootRefused(JsonRpcException):
    CODE = REQUEST_FAILED


def request_error(refused: BroadRoot) -> BroadRootRefused:
    return BroadRootRefused(
        refused.message("lsp"), data={"code": BROAD_ROOT, "recovery": refused.recovery("lsp")}
    )


def notice(refused: BroadRoot) -> types.ShowMessageParams:
    return types.ShowMessageParams(
        type=types.MessageType.Error, message=f"toolhost: {refused.message('lsp')}"
    )


def refused_call(refused: BroadRoot, params: CallParams) -> CallResult:
    """A call's result when the root is refused: an error with the code and the recovery,
    nothing run (the model reads the same sentence the editor showed)."""
    from lsp_server.protocol import ErrorInfo
    from lsp_server.runtime.results.call_records import refused_before_start

    message = refused.message("lsp")
    error = ErrorInfo(code=BROAD_ROOT, message=message, recovery=refused.recovery("lsp"))
    return refused_before_start(params.name, params.call_id or f"c-{os.urandom(6).hex()}", error)


def check(roots: list[Path], dirs: Dirs, problems: list[str]) -> BroadRoot | None:
    """The refusal of `roots` (None: they are fine), also listed among the configuration
    problems that toolhost/status and `toolhost doctor` show."""
    refused = refused_root(roots, dirs)
    if refused is not None:
        log.warning("%s", refused.message("lsp"))
        problems.append(refused.message("lsp"))
    return refused
