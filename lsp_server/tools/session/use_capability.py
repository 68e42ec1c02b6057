"""use_capability: the one door to every tool that is not on the core surface.

The provider-visible core surface stays fixed (and its hash with it); everything else is
listed, searched, inspected and called through here. A call goes through dispatch's own
nested entry point (Runtime.call_nested): the target's schema is checked by the core
validator with feedback placed inside `arguments`, and the target's read-only flag decides
approval. `session:tool_result` pages stored full results like toolhost/result.
"""

from __future__ import annotations

import re
import time
from typing import Any

from lsp_server.core.contract import JSON_SCHEMA_DIALECT, ContractEntry, Hints, Tool
from lsp_server.core.errors import INVALID_ARGUMENT, UNKNOWN_TOOL, ToolError
from lsp_server.core.tool_output import ToolOutput
from lsp_server.protocol import CallParams
from lsp_server.runtime.context import NestedCalls, ToolContext
from lsp_server.runtime.sessions.stored_results import DEFAULT_PAGE_BYTES, MAX_PAGE_BYTES
from lsp_server.tools.session import workspace_apply
from lsp_server.tools.session.workspace_activity import ACTIVITY, ACTIVITY_ID
from lsp_server.tools.session.workspace_activity import report as activity_report

RESULT_ID = "session:tool_result"
TOOL_PREFIX = "tool:"
SEARCH_LIMIT = 10
COMPRESS_EXPLANATION = (
    "compress (conversation compression) is not registered: it needs the agent's "
    "conversation, which a tool host does not own. Compact the conversation with the "
    "agent's own mechanism instead."
)

RESULT_PAGE = ContractEntry(
    name=RESULT_ID,
    read_only=True,
    kind="read",
    description=(
        "Page through the full text of a truncated result (its meta.resultRef) by UTF-8 byte "
        "offset, like toolhost/result; each page reports the next offset and the sha256 of "
        "the whole text."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["result_ref"],
        "properties": {
            "result_ref": {
                "type": "string",
                "minLength": 1,
                "description": "The resultRef of the truncated result.",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "UTF-8 byte offset to start at (the previous page's next offset).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_PAGE_BYTES,
                "description": f"Bytes per page (default {DEFAULT_PAGE_BYTES}).",
            },
        },
    },
)

CONTRACT = ContractEntry(
    name="use_capability",
    core=True,
    # It can call every tool (each asks for approval as itself): its hints are the union.
    hints=Hints(delegates=True, destructive=True, open_world=True),
    read_only=True,
    kind="read",
    description=(
        "Reach every tool that is not listed directly. action=list: the inventory; "
        "search (query): ranked by name and description; inspect (id): the exact schema and "
        "its fingerprint; call (id, arguments): run it, with the target's parameters INSIDE "
        "`arguments` (validated against the target's schema; writers still ask for "
        "approval); decline (id, reason?): record that you chose not to use one. Ids are "
        "tool:<name> and session:tool_result (pages a truncated result by its resultRef)."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "required": ["action"],
        "properties": {
            "action": {
                "enum": ["list", "search", "inspect", "call", "decline"],
                "description": "What to do.",
            },
            "query": {
                "type": "string",
                "description": "Words to search for in names and descriptions (search).",
            },
            "id": {
                "type": "string",
                "description": "tool:<name> or session:tool_result (inspect, call, decline).",
            },
            "arguments": {
                "type": "object",
                "description": "The target's own parameters (call).",
            },
            "reason": {
                "type": "string",
                "description": "Why you are not using the capability (decline).",
            },
        },
    },
)


class CapabilityDeclines:
    """Capabilities the model said it chose not to use (per session, for toolhost/status)."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def record(self, capability: str, reason: str | None) -> None:
        self.entries.append({"id": capability, "reason": reason, "at": time.time()})

    def status(self) -> dict[str, Any]:
        return {"declinedCapabilities": list(self.entries)}


def _capabilities(ctx: ToolContext) -> dict[str, ContractEntry]:
    """Every reachable capability by id: all standard tools but this one, then paging."""
    found = {
        TOOL_PREFIX + tool.name: tool.contract
        for tool in ctx.registry.surface("full")
        if tool.name != CONTRACT.name
    }
    found[RESULT_ID] = RESULT_PAGE
    found[ACTIVITY_ID] = ACTIVITY
    found[workspace_apply.APPLY_ID] = workspace_apply.APPLY
    return found


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.;:])(\s|$)", text)
    return match.group(1) if match else text


def _kind_label(entry: ContractEntry) -> str:
    if entry.read_only:
        return "read-only"
    return {"edit": "writes files", "shell": "runs commands"}.get(entry.kind, "changes state")


def _line(capability: str, entry: ContractEntry) -> str:
    return f"{capability} ({_kind_label(entry)}): {_first_sentence(entry.description)}"


def _require(value: Any, what: str, action: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ToolError(INVALID_ARGUMENT, f"action={action} needs {what}", f"pass {what}")
    return value.strip()


def _lookup(ctx: ToolContext, raw: str) -> tuple[str, ContractEntry]:
    own = raw in (RESULT_ID, ACTIVITY_ID, workspace_apply.APPLY_ID) or raw.startswith(TOOL_PREFIX)
    capability = raw if own else TOOL_PREFIX + raw
    if capability.removeprefix(TOOL_PREFIX) == "compress":
        raise ToolError(UNKNOWN_TOOL, COMPRESS_EXPLANATION, "do not call compress")
    known = _capabilities(ctx)
    entry = known.get(capability)
    if entry is None:
        if capability == TOOL_PREFIX + CONTRACT.name:
            raise ToolError(
                INVALID_ARGUMENT, "use_capability cannot call itself", "call the target directly"
            )
        ranked = [cap for cap, _ in _ranked(known, capability.removeprefix(TOOL_PREFIX))][:3]
        hint = f"closest: {', '.join(ranked)}" if ranked else "see action=list"
        raise ToolError(UNKNOWN_TOOL, f"no capability {raw!r} ({hint})", "use an id from list")
    return capability, entry


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _ranked(known: dict[str, ContractEntry], query: str) -> list[tuple[str, int]]:
    words = [_stem(w) for w in re.findall(r"[a-z0-9]+", query.lower())]
    phrase = "_".join(re.findall(r"[a-z0-9]+", query.lower()))
    scored: list[tuple[str, int]] = []
    for capability, entry in known.items():
        name = entry.name.lower()
        parts = re.split(r"[_:]", name)
        description = entry.description.lower()
        score = 100 if phrase and phrase == name else (40 if phrase and phrase in name else 0)
        for word in words:
            if any(part.startswith(word) for part in parts):
                score += 20
            elif word in name:
                score += 10
            hits = len(re.findall(r"\b" + re.escape(word), description))
            score += 3 * min(hits, 3)
        if score > 0:
            scored.append((capability, score))
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def _list(ctx: ToolContext) -> ToolOutput:
    known = _capabilities(ctx)
    core = set(ctx.registry.core_names)
    optional = {cap: entry for cap, entry in known.items() if entry.name not in core}
    lines = [f"{len(optional)} capabilities (inspect one for its schema, then action=call):"]
    lines += [_line(cap, entry) for cap, entry in sorted(optional.items())]
    direct = sorted(core - {CONTRACT.name})
    if direct:
        lines.append("Called directly (also reachable here): " + ", ".join(direct))
    return ToolOutput("\n".join(lines))


def _search(ctx: ToolContext, query: str) -> ToolOutput:
    known = _capabilities(ctx)
    ranked = _ranked(known, query)[:SEARCH_LIMIT]
    lines = [_line(cap, known[cap]) for cap, _ in ranked]
    if "compress" in query.lower():
        lines.append(COMPRESS_EXPLANATION)
    if not lines:
        return ToolOutput(f"(no capability matches {query!r}; action=list shows them all)")
    return ToolOutput("\n".join(lines))


def _inspect(capability: str, entry: ContractEntry) -> ToolOutput:
    fingerprint = entry.fingerprint
    lines = [
        f"id: {capability}",
        f"read-only: {'yes' if entry.read_only else 'no (asks for approval by policy)'}",
        f"fingerprint: {fingerprint[:16]} (sha256 {fingerprint})",
        f"description: {entry.description}",
        "schema (canonical JSON; pass these parameters inside `arguments`):",
        entry.canonical_schema.rstrip("\n"),
    ]
    return ToolOutput("\n".join(lines))


def _page_result(ctx: ToolContext, runtime: NestedCalls, arguments: Any) -> ToolOutput:
    args = runtime.validated(RESULT_PAGE, arguments, "arguments")
    page = ctx.session.results.page(
        args["result_ref"], args.get("offset", 0), args.get("limit", DEFAULT_PAGE_BYTES)
    )
    end = page.total_bytes if page.next_offset is None else page.next_offset
    more = "complete" if page.complete else f"more: call again with offset={page.next_offset}"
    header = (
        f"[{page.result_ref}: bytes {page.offset}-{end} of {page.total_bytes}, "
        f"sha256 {page.sha256}; {more}]"
    )
    return ToolOutput(header + "\n" + page.text)


async def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    action = args["action"]
    if action == "list":
        return _list(ctx)
    if action == "search":
        return _search(ctx, _require(args.get("query"), "query", action))
    capability, entry = _lookup(ctx, _require(args.get("id"), "id", action))
    if action == "inspect":
        return _inspect(capability, entry)
    if action == "decline":
        ctx.session.extension(CapabilityDeclines).record(capability, args.get("reason"))
        reason = args.get("reason")
        return ToolOutput(f"noted: not using {capability}" + (f" ({reason})" if reason else ""))
    runtime = ctx.runtime
    if capability == RESULT_ID:
        return _page_result(ctx, runtime, args.get("arguments"))
    if capability == ACTIVITY_ID:
        wanted = runtime.validated(ACTIVITY, args.get("arguments") or {}, "arguments")
        return activity_report(ctx, wanted)
    if capability == workspace_apply.APPLY_ID:
        runtime.validated(workspace_apply.APPLY, args.get("arguments") or {}, "arguments")
        return await workspace_apply.report(ctx, {})
    nested = CallParams(name=entry.name, arguments=args.get("arguments"), session=ctx.session.id)
    return await runtime.call_nested(nested, ctx)


TOOLS = (Tool(CONTRACT, run),)
