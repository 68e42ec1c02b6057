"""Edits that merge: an edit of a file that changed since the session read it applies to
the current text when it touches only lines nobody changed since that read.

Three texts: `base` (what the session read: its observation keeps it for files up to
observations.SEEN_TEXT_CHARS), `current` (what the file holds now) and `after` (the
edit applied to `current`). The changes since the read are the hunks of base -> current,
the edit's are those of current -> after, both in lines of `current`. They must not
overlap, nor touch: an edit on the line right after an insertion, or two insertions at
one place, is ambiguous and refused (FS_EDIT_CONFLICT) with the diff since the read and
who made it.
"""

from __future__ import annotations

import difflib
import time
from pathlib import Path

import attrs

from lsp_server.core.errors import FS_EDIT_CONFLICT, ToolError
from lsp_server.fs.textio import Version
from lsp_server.runtime.sessions.activity import WorkspaceActivity, Write


@attrs.frozen
class Hunk:
    """Lines [start, end) of `current` (start == end: lines removed before `start`)."""

    start: int
    end: int
    lines: tuple[str, ...] = ()
    """The lines of `current` in the hunk (what the other writer put there)."""
    author: Write | None = None

    def shown(self) -> str:
        if self.end > self.start + 1:
            return f"lines {self.start + 1}-{self.end}"
        if self.end == self.start + 1:
            return f"line {self.start + 1}"
        return f"lines removed before line {self.start + 1}"


def hunks(before: str, after: str, *, in_before: bool = False) -> list[Hunk]:
    """The changed regions of before -> after, in line numbers of `after` (`in_before`: of
    `before`, the lines an edit of `before` replaces)."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    found = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        found.append(
            Hunk(i1, i2, tuple(old[i1:i2])) if in_before else Hunk(j1, j2, tuple(new[j1:j2]))
        )
    return found


def overlaps(theirs: Hunk, mine: Hunk) -> bool:
    """The two regions share a line, or touch where one of them is an insertion."""
    if theirs.start < mine.end and mine.start < theirs.end:
        return True
    if theirs.start == theirs.end or mine.start == mine.end:
        return mine.start <= theirs.end and theirs.start <= mine.end
    return False


def _authored(
    found: list[Hunk], path: Path, current: str, activity: WorkspaceActivity | None
) -> list[Hunk]:
    if activity is None:
        return found
    writes = activity.of_file(path)
    last = activity.left(path, current)
    out = []
    for hunk in found:
        author = activity.author_of_lines(path, hunk.lines, writes) if hunk.lines else None
        out.append(attrs.evolve(hunk, author=author or last))
    return out


def by_whom(hunk: Hunk, unknown: str, now: float) -> str:
    return hunk.author.label(now) if hunk.author is not None else unknown


def summary(theirs: list[Hunk], unknown: str) -> str:
    """`lines 40-52, by session codex-1 (edit_file, 12 s ago); line 7, by ...`"""
    now = time.time()
    return "; ".join(f"{h.shown()}, by {by_whom(h, unknown, now)}" for h in theirs[:8]) + (
        f"; and {len(theirs) - 8} more changes" if len(theirs) > 8 else ""
    )


@attrs.frozen
class Merge:
    """An edit of a file that changed since the session read it."""

    path: Path
    label: str
    base: str
    current: str
    unknown: str
    """Who left the file as it is, when no session's write names the lines (the editor's
    user, another program)."""
    version: Version
    """The version of `current`."""
    activity: WorkspaceActivity | None = None

    def check(self, after: str, diff_since_read: str) -> str:
        """The note for the edit's result; FS_EDIT_CONFLICT if it overlaps a change."""
        theirs = _authored(hunks(self.base, self.current), self.path, self.current, self.activity)
        mine = hunks(self.current, after, in_before=True)
        clashes = [t for t in theirs if any(overlaps(t, m) for m in mine)]
        if clashes:
            raise self.conflict(clashes, "in the lines this edit changes", diff_since_read)
        if not theirs:
            return ""
        return (
            f"[merged: also changed since your read: {summary(theirs, self.unknown)}; "
            "this edit touched none of those lines and was applied to the current text]"
        )

    def conflict(self, clashes: list[Hunk], where: str, diff_since_read: str) -> ToolError:
        return ToolError(
            FS_EDIT_CONFLICT,
            f"{self.label} changed since this session read it, {where}: "
            f"{summary(clashes, self.unknown)}. What changed since this session read it:\n"
            f"{diff_since_read}",
            "the diff above shows the file as it is now: redo the edit against it (or read "
            "the file again), keeping the other change unless it is meant to go",
            details={
                "diff": diff_since_read,
                "changedBy": [by_whom(h, self.unknown, time.time()) for h in clashes],
            },
        )

    def unmatched(self, failure: ToolError, diff_since_read: str) -> ToolError:
        """The edit does not apply to the current text (its old_string or anchor is gone
        or no longer unique) after someone changed the file: a conflict, naming them."""
        theirs = _authored(hunks(self.base, self.current), self.path, self.current, self.activity)
        if not theirs:
            return failure
        where = f"and the edit no longer applies ({failure.cause})"
        return self.conflict(theirs, where, diff_since_read)
