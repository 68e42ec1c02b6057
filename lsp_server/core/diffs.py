"""Unified diffs for approvals and edit receipts, and a line-level three-way merge."""

from __future__ import annotations

import difflib


def unified_diff(before: str, after: str, label: str, context: int = 3) -> str:
    old = before.replace("\r\n", "\n").splitlines(keepends=True)
    new = after.replace("\r\n", "\n").splitlines(keepends=True)
    lines = list(
        difflib.unified_diff(old, new, f"a/{label}", f"b/{label}", n=context, lineterm="\n")
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def clip(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    cut = data[:max_bytes].decode("utf-8", errors="ignore")
    cut = cut[: cut.rfind("\n") + 1] or cut
    return cut + f"[... diff clipped: {len(data) - len(cut.encode())} more bytes]\n"


def line_counts(diff: str) -> tuple[int, int]:
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def _changes(base: list[str], side: list[str]) -> list[tuple[int, int, list[str]]]:
    """The regions of `base` [start, end) that `side` replaces, with what it puts there."""
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [
        (i1, i2, side[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]


def _touch(a: tuple[int, int, list[str]], b: tuple[int, int, list[str]]) -> bool:
    """Two regions of base share a line, or meet where one is an insertion (the order of
    the two would be a guess)."""
    if a[0] < b[1] and b[0] < a[1]:
        return True
    if a[0] == a[1] or b[0] == b[1]:
        return b[0] <= a[1] and a[0] <= b[1]
    return False


def merge_lines(current: str, base: str, other: str) -> str | None:
    """`current` with the change base -> other applied, line by line; None when that change
    touches lines `current` changed since base (changes on neighbouring lines merge)."""
    old = base.splitlines(keepends=True)
    theirs = _changes(old, current.splitlines(keepends=True))
    mine = _changes(old, other.splitlines(keepends=True))
    if any(_touch(a, b) for a in theirs for b in mine):
        return None
    merged: list[str] = []
    at = 0
    for start, end, lines in sorted(theirs + mine, key=lambda change: (change[0], change[1])):
        merged += old[at:start] + lines
        at = end
    return "".join(merged + old[at:])
