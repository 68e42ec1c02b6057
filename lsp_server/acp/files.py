"""The agent's fs/read_text_file and fs/write_text_file, served by the runtime.

read  {sessionId, path, line?, limit?} -> {content}: acp_read_text_file (confined, secrets
      refused, the observation recorded), the file's exact text.
write {sessionId, path, content} -> {}: the minimal surface's `write` (refused unless the
      session read the file at its current version; atomic; encoding, BOM, line endings and
      mode kept; checkpointed; policy decides, asking through session/request_permission).
"""

from __future__ import annotations

from typing import Any

from lsp_server.acp import read_window
from lsp_server.acp.calls import call, full_text, text_param
from lsp_server.acp.replies import refuse
from lsp_server.acp.workspaces import Served
from lsp_server.runtime.core import errors

READ = "fs/read_text_file"
WRITE = "fs/write_text_file"


async def read_text_file(served: Served, session_id: str, params: dict[str, Any]) -> Any:
    arguments: dict[str, Any] = {"path": text_param(params, "path", READ)}
    for name in ("line", "limit"):
        if params.get(name) is not None:
            arguments[name] = params[name]
    result = await call(served, session_id, read_window.NAME, arguments, "minimal")
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
    arguments = {"path": text_param(params, "path", WRITE), "content": content}
    await call(served, session_id, "write", arguments, "minimal")
    return {}


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
