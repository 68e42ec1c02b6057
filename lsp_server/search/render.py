"""An engine's outcome as the text the model reads.

Content rows follow ripgrep's own layout (`rg -n --no-heading`): `path:N:text` for a
matching line, `path-N-text` for a context line, `--` between groups that are not
adjacent. `files_with_matches` prints one path a line, `count` prints `path:N`. When
`max_results` cuts the listing, a last line gives the true totals.
"""

from __future__ import annotations

from collections.abc import Callable

from lsp_server.search.query import OutputMode, SearchOutcome

NO_MATCHES = "(no matches)"
_CONTROL = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def printable_path(path: str) -> str:
    """A path that fits on one row and encodes as UTF-8: bytes that are not UTF-8 (kept by
    os.fsdecode as surrogates) become \\xNN, newlines and tabs become \\n, \\t."""
    if path.isascii() and path.isprintable():
        return path  # what the rest would give back unchanged, at a tenth of the cost
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text.translate(_CONTROL)


def _content_rows(
    outcome: SearchOutcome, max_results: int, context: int, display: Callable[[str], str]
) -> tuple[list[str], int]:
    rows: list[str] = []
    shown = 0
    for hits in outcome.files:
        if shown >= max_results:
            break
        name = printable_path(display(hits.path))
        previous: int | None = None
        last_match = 0
        for line in hits.lines:
            if line.is_match:
                if shown >= max_results:
                    break
                shown += 1
                last_match = line.number
            elif shown >= max_results and line.number > last_match + context:
                break
            if context and rows and (previous is None or line.number != previous + 1):
                rows.append("--")
            separator = ":" if line.is_match else "-"
            rows.append(f"{name}{separator}{line.number}{separator}{line.text}")
            previous = line.number
    return rows, shown


def render(
    outcome: SearchOutcome,
    *,
    mode: OutputMode,
    max_results: int,
    context: int,
    display: Callable[[str], str],
    timeout_seconds: float,
) -> str:
    files = len(outcome.files)
    total = outcome.total_matched_lines
    if mode == "content":
        rows, shown = _content_rows(outcome, max_results, context, display)
        cut = shown < total
        summary = f"[showing {shown} of {total} matching lines in {files} files"
    else:
        listed = outcome.files[:max_results]
        if mode == "files_with_matches":
            rows = [printable_path(display(hits.path)) for hits in listed]
        else:
            rows = [f"{printable_path(display(h.path))}:{h.matched_lines}" for h in listed]
        cut = len(listed) < files
        summary = f"[showing {len(listed)} of {files} files"
        if mode == "count":
            summary += f" ({total} matching lines in all)"
    notes: list[str] = []
    if cut:
        notes.append(summary + "; narrow the pattern or path, add include, or raise max_results]")
    if outcome.timed_out:
        so_far = "the matches found so far, the totals are lower bounds; narrow the path"
        notes.append(stopped_note(timeout_seconds, so_far))
    skipped = unsearched_note([warning_path(line) for line in outcome.warnings], display)
    if skipped:
        notes.append(skipped)
    if not rows and not outcome.timed_out:  # nothing found in part of the tree is no answer
        rows = [NO_MATCHES]
    return "\n".join(rows + notes)


def stopped_note(seconds: float, what: str) -> str:
    """The line every search that hit its time limit ends with (glob, grep, ls,
    code_index search), instead of "(no matches)" for what it never looked at."""
    return f"[stopped after {seconds:g} s: partial: {what}, or raise timeout_seconds]"


UNSEARCHED_LISTED = 5


def warning_path(line: str) -> tuple[str, str]:
    """(path, why) of an engine's complaint about one path: rg's `rg: ./PATH: why (os
    error N)`, the Python engine's `PATH: why`."""
    line = line.removeprefix("rg: ")
    path, _, why = line.rpartition(": ")
    return (path.removeprefix("./"), why) if path else ("", line)


def _shortened(path: str) -> str:
    """A path past PATH_MAX is thousands of characters: its two ends, and its length."""
    if len(path) <= 160:
        return path
    return f"{path[:60]}…{path[-80:]} ({len(path)} characters)"


def unsearched_note(
    skipped: list[tuple[str, str]], display: Callable[[str], str], what: str = "searched"
) -> str:
    """What a search could not open, and why ("" for nothing): without it a folder too
    deep to open (past PATH_MAX, 4096 bytes) or not readable reads as "(no matches)"."""
    if not skipped:
        return ""
    shown = [
        f"{_shortened(printable_path(display(path)))}: {why}"
        for path, why in skipped[:UNSEARCHED_LISTED]
    ]
    more = len(skipped) - len(shown)
    tail = f"; and {more} more" if more > 0 else ""
    deep = any("too long" in why.lower() for _, why in skipped)
    verb = "list" if what == "listed" else "search"
    hint = (
        f"a path over 4096 bytes cannot be opened by name: {verb} from a folder deeper down "
        "(path), or use bash with cd in steps"
        if deep
        else "check their permissions, or search elsewhere"
    )
    return f"[not {what}, could not be opened: {'; '.join(shown)}{tail}; {hint}]"
