"""Everything one session changed: one diff to review it (toolhost/sessionChanges) and one
request that reverts it all, newest call first (toolhost/revertSession). The editors'
"Review this agent's changes" and "Revert all of this agent's changes" (docs/AGENTS.md).

The diff shows each file from before the session's first change of it to after its last,
from the checkpoints (not the disk): what others changed later is not in it, and what
others changed between two of the session's calls is (a checkpoint holds whole files).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import attrs

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.checkpoints.records import Change, FileRecord
from lsp_server.checkpoints.shadow.tree_changes import Entry
from lsp_server.core.diffs import clip, unified_diff
from lsp_server.protocol import (
    CheckpointFile,
    RevertConflict,
    RevertSessionParams,
    RevertSessionResult,
    SessionChangesParams,
    SessionChangesResult,
)
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.reverts import Reverter
from lsp_server.runtime.sessions.activity import names_its_agent
from lsp_server.runtime.sessions.observations import FileLocks

ALL = 100_000
MAX_DIFF_BYTES = 2 * 1024 * 1024


@attrs.define
class _Span:
    """One file across a session's calls: its state before the first, after the last."""

    before: Entry | None
    after: Entry | None
    not_stored: bool = False


async def session_changes(
    checkpoints: Checkpoints, params: SessionChangesParams
) -> SessionChangesResult:
    listed = list(reversed(await checkpoints.listed(params.session, ALL)))  # oldest first
    spans: dict[tuple[Path, str], _Span] = {}
    for item in listed:
        for record in item.checkpoint.files:
            _follow(spans, item.root, record)
    agent = next((i.checkpoint.agent for i in listed if i.checkpoint.agent), None)
    files, diff = await anyio.to_thread.run_sync(_review, checkpoints, spans)
    named = names_its_agent(params.session, agent)
    who = f"session {params.session}" + ("" if named else f" ({agent})")
    text = (
        f"{who} changed {len(files)} file(s) in {len(listed)} call(s)."
        if listed
        else f"{who} has no checkpoint here (it changed no file, or the bounds dropped them)."
    )
    calls = [item.checkpoint.call_id for item in listed]
    return SessionChangesResult(params.session, agent, calls, files, diff, text)


def _review(
    checkpoints: Checkpoints, spans: dict[tuple[Path, str], _Span]
) -> tuple[list[CheckpointFile], str]:
    """The files and the diff (blocking: git reads the blobs, difflib diffs them)."""
    relative = checkpoints.workspace.relative
    files, parts = [], []
    for root in dict.fromkeys(root for root, _ in spans):
        mine = {path: span for (r, path), span in spans.items() if r == root}
        oids = [e.oid for s in mine.values() for e in (s.before, s.after) if e is not None]
        blobs = checkpoints.store(root).repo.read_blobs(oids)
        for path, span in sorted(mine.items()):
            if span.before == span.after:
                continue  # changed and changed back
            shown = relative(root / path)
            files.append(CheckpointFile(shown, _change(span), not_stored=span.not_stored))
            parts.append(_diff(shown, span, blobs))
    return files, clip("".join(parts), MAX_DIFF_BYTES)


def _follow(spans: dict[tuple[Path, str], _Span], root: Path, record: FileRecord) -> None:
    if record.change == "moved" and record.source is not None:
        _step(spans, (root, record.source), record.before, None, record.not_stored)
        _step(spans, (root, record.path), None, record.after, record.not_stored)
    else:
        _step(spans, (root, record.path), record.before, record.after, record.not_stored)


def _step(
    spans: dict[tuple[Path, str], _Span],
    key: tuple[Path, str],
    before: Entry | None,
    after: Entry | None,
    not_stored: bool,
) -> None:
    span = spans.get(key)
    if span is None:
        spans[key] = _Span(before, after, not_stored)
    else:
        span.after = after
        span.not_stored = span.not_stored or not_stored


def _change(span: _Span) -> Change:
    if span.before is None:
        return "created"
    return "deleted" if span.after is None else "modified"


def _diff(shown: str, span: _Span, blobs: dict[str, bytes]) -> str:
    if span.not_stored:
        return f"--- a/{shown}\n+++ b/{shown}\n(over the checkpoint size limit: not shown)\n"
    before = blobs.get(span.before.oid, b"") if span.before else b""
    after = blobs.get(span.after.oid, b"") if span.after else b""
    if b"\0" in before[:8192] or b"\0" in after[:8192]:
        return f"Binary file {shown} {_change(span)}\n"
    old = before.decode("utf-8", "replace")
    new = after.decode("utf-8", "replace")
    return unified_diff(old, new, shown)


async def revert_session(
    checkpoints: Checkpoints, files: FileService, locks: FileLocks, params: RevertSessionParams
) -> RevertSessionResult:
    """Revert each of the session's calls, newest first; a file changed since by someone
    else is left and listed, as a single revert does."""
    listed = await checkpoints.listed(params.session, ALL)
    reverter = Reverter(checkpoints, files, locks)
    result = RevertSessionResult([], [], [], [])
    for call_id in dict.fromkeys(item.checkpoint.call_id for item in listed):
        outcome = await reverter.revert(call_id, params.by, params.include_shared)
        result.calls.append(call_id)
        result.reverted += [p for p in outcome.reverted if p not in result.reverted]
        result.conflicts += [
            RevertConflict(c.path, f"{c.reason} (call {call_id})", c.diff)
            for c in outcome.conflicts
        ]
        if outcome.checkpoint:
            result.checkpoints.append(outcome.checkpoint)
    result.text = _summary(params.session, result)
    return result


def _summary(session: str, result: RevertSessionResult) -> str:
    if not result.calls:
        return f"session {session} has no checkpoint here: nothing to revert."
    lines = [
        f"Reverted {len(result.calls)} call(s) of session {session}, newest first: "
        f"{len(result.reverted)} file(s) put back."
    ]
    lines += [f"  {path}" for path in result.reverted]
    if result.conflicts:
        lines.append(f"Not reverted ({len(result.conflicts)}):")
        lines += [f"  {c.path}: {c.reason}" for c in result.conflicts]
    if result.checkpoints:
        lines.append(
            "Each revert is a checkpoint of its own (revert it to redo): "
            + ", ".join(result.checkpoints)
        )
    return "\n".join(lines)
