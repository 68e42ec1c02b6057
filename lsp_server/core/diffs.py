"""Unified diffs for approvals and edit receipts."""

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
