"""Shared wording of file writers' results: sizes, line counts, clipped diffs."""

from __future__ import annotations

from lsp_server.core.diffs import clip, line_counts, unified_diff

RECEIPT_BYTES = 2048


def receipt(before: str, after: str, label: str) -> str:
    """A small unified diff (<= 2 KiB, clipped) of what the write will do."""
    return clip(unified_diff(before, after, label), RECEIPT_BYTES)


def change_summary(before: str, after: str, label: str) -> str:
    added, removed = line_counts(unified_diff(before, after, label))
    return f"+{added}/-{removed} lines"
