"""workspace:activity (through use_capability): who else is working in this workspace now.

The live sessions of this toolhost (their agent and the calls in flight), the sessions of
other toolhost processes on the same root that wrote in the last minutes, and the files
each changed then, from the root's activity log (runtime/sessions/activity.py). It lists
what toolhost itself did: a program that writes outside toolhost is not in it.
"""

from __future__ import annotations

import os
import time
from typing import Any

from lsp_server.core.contract import JSON_SCHEMA_DIALECT, ContractEntry
from lsp_server.core.tool_output import ToolOutput
from lsp_server.runtime.context import ToolContext

ACTIVITY_ID = "workspace:activity"
DEFAULT_MINUTES = 10
MAX_FILES_SHOWN = 20

ACTIVITY = ContractEntry(
    name=ACTIVITY_ID,
    read_only=True,
    kind="read",
    description=(
        "Who is working in this workspace now: the live sessions of this toolhost (their "
        "agent, the calls in flight), the sessions of other toolhost processes on the same "
        "folder, and the files each changed in the last minutes."
    ),
    schema={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "minutes": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1440,
                "description": f"How far back to list changed files (default {DEFAULT_MINUTES}).",
            },
        },
    },
)


def _who(session: str, agent: str | None) -> str:
    return f"{session} ({agent})" if agent and agent != session else session


def _files(ctx: ToolContext, files: dict[str, dict[str, Any]], now: float) -> list[str]:
    newest = sorted(files.items(), key=lambda item: -float(item[1]["at"]))
    shown = []
    for path, last in newest[:MAX_FILES_SHOWN]:
        rel = _relative(ctx, path)
        shown.append(f"    {rel} ({last['tool']}, {max(0, round(now - last['at']))} s ago)")
    if len(newest) > MAX_FILES_SHOWN:
        shown.append(f"    ... and {len(newest) - MAX_FILES_SHOWN} more files")
    return shown


def _relative(ctx: ToolContext, path: str) -> str:
    try:
        return ctx.workspace.relative(ctx.workspace.resolve(path, "read"))
    except Exception:  # a file gone or outside since: its path as recorded
        return path


def report(ctx: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
    minutes = int(arguments.get("minutes", DEFAULT_MINUTES))
    activity = ctx.session.activity
    now = time.time()
    recent = activity.recent(minutes * 60)
    me = os.getpid()
    lines = [f"Sessions of this toolhost (process {me}):"]
    for live in activity.live():
        you = " (you)" if live["session"] == ctx.session.id else ""
        lines.append(f"  {_who(live['session'], live['agent'])}{you}: {live['calls']} calls")
        for flight in live["inFlight"]:
            since = max(0, round(now - flight["since"]))
            lines.append(f"    running: {flight['tool']} for {since} s ({flight['callId']})")
        changed = recent.pop((live["session"], me), None)
        if changed:
            lines.append(f"    changed in the last {minutes} min:")
            lines += _files(ctx, changed["files"], now)
    others = [entry for (_, pid), entry in recent.items() if pid != me]
    stale = [entry for (_, pid), entry in recent.items() if pid == me]
    if others or stale:
        lines.append(f"Other sessions that changed files in the last {minutes} min:")
        for entry in [*others, *stale]:
            where = "another toolhost process" if entry["pid"] != me else "this process, ended"
            lines.append(f"  {_who(entry['session'], entry['agent'])} ({where} {entry['pid']}):")
            lines += _files(ctx, entry["files"], now)
    else:
        lines.append(f"No other toolhost process changed files here in the last {minutes} min.")
    lines.append(
        "(toolhost sees its own sessions' calls; a program or editor writing on its own is "
        "not listed)"
    )
    return ToolOutput("\n".join(lines))
