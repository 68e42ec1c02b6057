"""What changed in a file since the session read it, for the FS_STALE_VERSION refusal: a
short unified diff (the model can redo its edit on the new content without guessing), or,
when only line digests were kept, how many lines differ."""

from __future__ import annotations

import collections
import difflib
from typing import TYPE_CHECKING

import attrs

from lsp_server.core.errors import FS_STALE_VERSION, ToolError
from lsp_server.fs.textio import FileVersion
from lsp_server.runtime.results.bounding import cut_line
from lsp_server.runtime.sessions.observations import SeenContent, line_digests

if TYPE_CHECKING:
    from lsp_server.fs.textio import TextFile, Version
    from lsp_server.runtime.sessions.observations import Observations

MAX_DIFF_LINES = 40
MAX_DIFF_LINE_CHARS = 300
CONTEXT_LINES = 2
REREAD = "read the file again (any window), then redo the edit against what is there now"


@attrs.frozen
class Change:
    text: str
    """The diff (or the count of differing lines); empty when nothing was kept."""
    complete: bool
    """The diff shows every changed line whole: the new content is known from it."""


def what_changed(seen: SeenContent | None, now: str) -> Change:
    if seen is None:
        return Change("", False)
    if seen.text is None:
        return Change(_count_only(seen, now), False)
    old_lines = seen.text.splitlines(keepends=True)
    new_lines = now.splitlines(keepends=True)
    diff = list(difflib.unified_diff(old_lines, new_lines, "as read", "now", n=CONTEXT_LINES))
    if not diff:  # the same lines, other line endings or a final newline
        return Change("(the same lines; only line endings or the final newline differ)", False)
    shown = [_shown(line) for line in diff[:MAX_DIFF_LINES]]
    complete = len(diff) <= MAX_DIFF_LINES and all(
        len(line.rstrip("\n")) <= MAX_DIFF_LINE_CHARS for line in diff
    )
    body = "".join(line if line.endswith("\n") else line + "\n" for line in shown)
    if len(diff) > MAX_DIFF_LINES:
        body += (
            f"[... {len(diff) - MAX_DIFF_LINES} more diff lines not shown; read the file to "
            "see the rest]\n"
        )
    return Change(f"{body}[end of the diff]", complete)


def _shown(line: str) -> str:
    end = "\n" if line.endswith("\n") else ""
    return cut_line(line.rstrip("\n"), MAX_DIFF_LINE_CHARS) + end


def _count_only(seen: SeenContent, now: str) -> str:
    """Lines removed and added (as multisets of line digests): no text was kept."""
    before = collections.Counter(_digests(seen.line_digests or b""))
    after = collections.Counter(_digests(line_digests(now)))
    removed = sum((before - after).values())
    added = sum((after - before).values())
    lines_now = now.count("\n") + (0 if now.endswith("\n") or not now else 1)
    return (
        f"changed: {max(removed, added)} lines differ ({removed} removed, {added} added; "
        f"{seen.lines} -> {lines_now} lines, {seen.chars} -> {len(now)} chars); the file is "
        "too large for toolhost to keep what was read, so no diff"
    )


def _digests(data: bytes) -> list[bytes]:
    return [data[i : i + 4] for i in range(0, len(data), 4)]


def stale_refusal(
    rel: str,
    what: str,
    seen: SeenContent | None,
    current: TextFile,
    observations: Observations | None,
) -> ToolError:
    """FS_STALE_VERSION for `rel` ("changed since ..." in `what`) with what changed. A
    complete diff shows the model the whole new content, so the session then counts as
    having read it (a retry of the same edit works when its text is still there)."""
    change = what_changed(seen, current.text)
    cause = f"{rel} {what}"
    if change.text:
        cause += f". What changed since this session read it:\n{change.text}"
    if change.complete and observations is not None:
        observations.record_present(current.path, current.version, current.text)
        recovery = (
            "the diff above is complete and this session now counts as having read the new "
            "content: apply your edit again to the new content (or read the file again)"
        )
    else:
        recovery = REREAD
    details = {"diff": change.text} if change.text else None
    return ToolError(FS_STALE_VERSION, cause, recovery, details=details)


def describe_change(seen: Version, now: Version) -> str:
    """What differs between two versions of a file, in words."""
    if isinstance(seen, FileVersion) and isinstance(now, FileVersion):
        parts = []
        if seen.size != now.size:
            parts.append(f"size {seen.size} -> {now.size} bytes")
        if seen.mtime_ns != now.mtime_ns:
            parts.append("modification time changed")
        if seen.inode != now.inode:
            parts.append("file replaced")
        if not parts:
            parts.append("content changed")
        return ", ".join(parts)
    return "the editor buffer changed"
