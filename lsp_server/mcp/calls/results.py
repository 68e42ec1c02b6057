"""A toolhost CallResult (LSP wire form) as an MCP CallToolResult."""

from __future__ import annotations

import difflib
import json
from typing import Any

INVALID_PARAMS = -32602  # JSON-RPC's, as mcp_types names it

# What an MCP client needs to act on a refusal; `details` stays in _meta.
_ERROR_FIELDS = ("code", "message", "recovery", "signature", "violations")


def paging_hint(ref: str, shown: int, total: int) -> str:
    """The exact call that pages a truncated result back, as the model will read it."""
    from lsp_server.tools.session.use_capability import RESULT_ID

    call = {"action": "call", "id": RESULT_ID, "arguments": {"result_ref": ref, "offset": 0}}
    return (
        f"[truncated: {shown} of {total} characters shown. The whole text is stored as "
        f"result_ref {ref!r}: call use_capability with {json.dumps(call)} and repeat with the "
        "offset each page names until a page says complete.]"
    )


def to_mcp(result: dict[str, Any], notes: list[str], runtime: str) -> dict[str, Any]:
    """content (text, images), isError, structuredContent for refusals, meta in _meta."""
    meta = dict(result.get("meta") or {})
    content: list[dict[str, Any]] = []
    for part in result.get("content") or []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image":
            content.append({"type": "image", "data": part["data"], "mimeType": part["mimeType"]})
        elif part.get("type") == "text":
            content.append({"type": "text", "text": str(part.get("text", ""))})
    if not content or content[0]["type"] != "text":
        content.insert(0, {"type": "text", "text": ""})
    text = content[0]["text"]
    ref = meta.get("resultRef")
    if meta.get("truncated") and isinstance(ref, str) and ref not in text:
        text += "\n" + paging_hint(
            ref, int(meta.get("shownChars", 0)), int(meta.get("totalChars", 0))
        )
    if notes:
        text = "\n".join(notes) + "\n" + text
    content[0]["text"] = text
    answer: dict[str, Any] = {"content": content, "isError": bool(result.get("isError"))}
    error = result.get("error")
    if isinstance(error, dict):
        answer["structuredContent"] = {
            key: error[key] for key in _ERROR_FIELDS if error.get(key) is not None
        }
        if error.get("details") is not None:
            meta["errorDetails"] = error["details"]
    meta["callId"] = result.get("callId")
    meta["runtime"] = runtime
    answer["_meta"] = {"toolhost": meta}
    return answer


def refusal(code: str, cause: str, recovery: str, runtime: str) -> dict[str, Any]:
    """A result made on this side (the editor went away mid-call)."""
    message = f"{code}: {cause}; {recovery}"
    return {
        "content": [{"type": "text", "text": message}],
        "isError": True,
        "structuredContent": {"code": code, "message": message, "recovery": recovery},
        "_meta": {"toolhost": {"runtime": runtime}},
    }


def unknown_tool(name: str, result: dict[str, Any], listed: list[str]) -> dict[str, Any]:
    """tools/call of a tool that does not exist, as revision 2025-11-25 wants it: the
    JSON-RPC error object (-32602, `data` naming the nearest tools, from the runtime's own
    refusal when it gave them)."""
    meta = (result.get("_meta") or {}).get("toolhost") or {}
    closest = (meta.get("errorDetails") or {}).get("closest")
    if not isinstance(closest, list):
        closest = difflib.get_close_matches(name, listed, n=3, cutoff=0.4)
    hint = f"did you mean {', '.join(closest)}?" if closest else "no tool has a similar name"
    return {
        "code": INVALID_PARAMS,
        "message": f"Unknown tool: {name!r} ({hint}); call one of the tools tools/list names",
        "data": {"tool": name, "closest": closest, "tools": listed},
    }
