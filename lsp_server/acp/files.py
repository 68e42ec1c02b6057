"""The agent's fs/read_text_file and fs/write_text_file, served by the runtime.

read  {sessionId, path, line?, limit?} -> {content}: acp_read_text_file (confined, secrets
      refused, the observation recorded), the file's exact text.
write {sessionId, path, content} -> {}: the minimal surface's `write` (refused unless the
      session read the file at its current version; atomic; encoding, BOM, line endings and
      mode kept; checkpointed; policy decides, asking through session/request_permission).

When the editor serves fs/* itself, each call first asks it for the file (buffers.py): its
unsaved text is what the agent reads, and where a write to such a file goes.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Literal

from lsp_server.acp.calls import call, full_text, text_param
from lsp_server.acp.replies import refuse
from lsp_server.acp.workspaces import Served
from lsp_server.core import errors
from lsp_server.core.errors import ToolError
from lsp_server.runtime.context import Caller
from lsp_server.tools.files import read_window

READ = "fs/read_text_file"
WRITE = "fs/write_text_file"


async def read_text_file(served: Served, session_id: str, params: dict[str, Any]) -> Any:
    arguments: dict[str, Any] = {"path": text_param(params, "path", READ)}
    for name in ("line", "limit"):
        if params.get(name) is not None:
            arguments[name] = params[name]
    await _ask_the_editor(served, session_id, arguments["path"], "read")
    caller = Caller(editor_session=session_id)
    result = await call(served, session_id, read_window.NAME, arguments, "minimal", caller)
    return {"content": full_text(served, session_id, result)}


async def write_text_file(served: Served, session_id: str, params: dict[str, Any]) -> Any:
    content = params.get("content")
    limit = served.runtime.config.limits.max_file_bytes
    if isinstance(content, str) and len(content) > limit // 4 and _size(content) > limit:
        raise refuse(
            errors.FS_TOO_LARGE,
            f"the content has {_size(content)} bytes, over the {limit} byte limit of a file",
            "write a smaller file, or generate the big one with a command in a terminal",
        )
    path = text_param(params, "path", WRITE)
    arguments = {"path": path, "content": content}
    await _ask_the_editor(served, session_id, path, "write")
    # The editor's request: a file with unsaved text there takes the write in its buffer.
    await call(served, session_id, "write", arguments, "minimal", Caller(editor_session=session_id))
    return {}


async def _ask_the_editor(
    served: Served, session_id: str, raw: str, access: Literal["read", "write"]
) -> None:
    """The editor's own text of the file, when it serves fs/*: only for a path the call
    will accept (absolute, inside the workspace, no secret): the runtime refuses the rest."""
    if served.buffers is None or not PurePosixPath(raw).is_absolute():
        return
    workspace = served.runtime.workspace
    try:
        path = workspace.resolve(raw, access)
        workspace.require_not_secret(path)
    except ToolError:
        return
    await served.buffers.prefetch(session_id, path)


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
