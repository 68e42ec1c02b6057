"""The edit matching ladder and the diagnostics a model needs when a match fails.

Levels, stopping at the first with any match (uniqueness is required at that level):
exact -> exact after adapting LF/CRLF -> ignoring trailing whitespace per line ->
ignoring indentation (the file's indentation mapped back into new_string) -> with copied
`N→` line-number prefixes stripped from every line.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

import attrs

from lsp_server.core.errors import EDIT_NOT_FOUND, EDIT_NOT_UNIQUE, ToolError
from lsp_server.fs.textio import adapt_newlines, dominant_newline

LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+(?:→|\t)", re.MULTILINE)


@attrs.frozen
class Match:
    start: int
    end: int
    replacement: str


@attrs.frozen
class Replaced:
    text: str
    count: int
    level: str  # exact | newline | trailing whitespace | indentation | line numbers


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)
    return starts


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def exact_matches(text: str, old: str, new: str) -> list[Match]:
    matches = []
    start = text.find(old)
    while start != -1 and old:
        matches.append(Match(start, start + len(old), new))
        start = text.find(old, start + len(old))
    return matches


def _split_keep(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _line_window(
    text: str, old: str, new: str, key: Callable[[str], str], remap: bool
) -> list[Match]:
    """Whole-line matching with `key` normalising each line (without its ending)."""
    old_lines = [line.rstrip("\r\n") for line in old.strip("\r\n").split("\n")]
    if not any(line.strip() for line in old_lines):
        return []
    file_lines = _split_keep(text)
    keys = [key(line.rstrip("\r\n")) for line in file_lines]
    wanted = [key(line) for line in old_lines]
    starts = _line_starts(text)
    newline = dominant_newline(text)
    matches = []
    size = len(wanted)
    index = 0
    while index + size <= len(file_lines):
        if keys[index : index + size] == wanted:
            window = file_lines[index : index + size]
            start = starts[index]
            body_end = start + sum(len(line) for line in window)
            last = window[-1]
            ending = last[len(last.rstrip("\r\n")) :]
            end = body_end - len(ending)
            replacement = new.rstrip("\r\n") if old.endswith(("\n",)) else new
            if remap:
                replacement = _remap_indent(old_lines, window, replacement)
            matches.append(Match(start, end, adapt_newlines(replacement, newline)))
            index += size
        else:
            index += 1
    return matches


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _remap_indent(old_lines: list[str], window: list[str], new: str) -> str:
    """Give new_string the file's indentation: each indentation old_string used maps to
    the indentation of the file line it matched; deeper levels keep their extra part."""
    mapping: dict[str, str] = {}
    for old_line, file_line in zip(old_lines, window, strict=False):
        if old_line.strip():
            mapping.setdefault(_indent(old_line), _indent(file_line.rstrip("\r\n")))
    by_length = sorted(mapping, key=len, reverse=True)
    out = []
    for line in new.split("\n"):
        indent = _indent(line)
        if line.strip() and indent not in mapping:
            prefix = next((old for old in by_length if indent.startswith(old)), None)
            if prefix is not None:
                out.append(mapping[prefix] + line[len(prefix) :])
                continue
        out.append(mapping.get(indent, indent) + line[len(indent) :] if line.strip() else line)
    return "\n".join(out)


def _levels(text: str, old: str, new: str) -> list[tuple[str, Callable[[], list[Match]]]]:
    newline = dominant_newline(text)

    def newline_adapted() -> list[Match]:
        lf_old = old.replace("\r\n", "\n")
        variant = adapt_newlines(lf_old, newline)
        if variant == old:
            variant = lf_old
        if variant == old:
            return []
        return exact_matches(text, variant, adapt_newlines(new.replace("\r\n", "\n"), newline))

    def stripped_numbers() -> list[Match]:
        if not LINE_NUMBER_PREFIX.search(old):
            return []
        old2 = LINE_NUMBER_PREFIX.sub("", old)
        new2 = LINE_NUMBER_PREFIX.sub("", new)
        for _, level in _levels(text, old2, new2)[:4]:
            found = level()
            if found:
                return found
        return []

    return [
        ("exact", lambda: exact_matches(text, old, new)),
        ("newline", newline_adapted),
        ("trailing whitespace", lambda: _line_window(text, old, new, str.rstrip, False)),
        ("indentation", lambda: _line_window(text, old, new, str.strip, True)),
        ("line numbers", stripped_numbers),
    ]


def replace(text: str, old: str, new: str, replace_all: bool, label: str) -> Replaced:
    for level, find in _levels(text, old, new):
        matches = find()
        if not matches:
            continue
        if len(matches) > 1 and not replace_all:
            lines = [line_of(text, m.start) for m in matches]
            shown = ", ".join(str(n) for n in lines[:20])
            raise ToolError(
                EDIT_NOT_UNIQUE,
                f"old_string matches {len(matches)} places in {label} (lines {shown})",
                "include more surrounding lines to make it unique, or pass replace_all=true",
                details={"lines": lines, "level": level},
            )
        pieces = []
        cursor = 0
        for match in matches:
            pieces.append(text[cursor : match.start])
            pieces.append(match.replacement)
            cursor = match.end
        pieces.append(text[cursor:])
        return Replaced("".join(pieces), len(matches), level)
    raise not_found(text, old, label)


def visible(line: str) -> str:
    return line.replace("\t", "→").replace(" ", "·").replace("\r", "␍")


def not_found(text: str, old: str, label: str) -> ToolError:
    """edit.not_found with the closest region and its first differing line."""
    old_lines = old.replace("\r\n", "\n").split("\n")
    file_lines = text.replace("\r\n", "\n").split("\n")
    size = max(1, len(old_lines))
    best_ratio, best_index = 0.0, -1
    target = "\n".join(old_lines)
    # Bounded work on large files: compare only windows sharing a line with old_string.
    anchors = {line.strip() for line in old_lines if line.strip()}
    candidates = [i for i, line in enumerate(file_lines) if line.strip() in anchors] or list(
        range(0, len(file_lines), max(1, len(file_lines) // 2000))
    )
    seen: set[int] = set()
    for anchor in candidates[:4000]:
        for offset in range(size):
            start = anchor - offset
            if start < 0 or start in seen or start >= len(file_lines):
                continue
            seen.add(start)
            window = "\n".join(file_lines[start : start + size])
            matcher = difflib.SequenceMatcher(None, target, window, autojunk=False)
            if matcher.quick_ratio() <= best_ratio:
                continue
            ratio = matcher.ratio()
            if ratio > best_ratio:
                best_ratio, best_index = ratio, start
    cause = f"old_string was not found in {label}"
    details: dict[str, object] = {}
    if best_index >= 0 and best_ratio >= 0.5:
        region = file_lines[best_index : best_index + size]
        diff_line = ""
        for number, (want, have) in enumerate(zip(old_lines, region, strict=False)):
            if want != have:
                diff_line = (
                    f"; first difference at line {best_index + number + 1}: "
                    f"file has '{visible(have)}' but old_string has '{visible(want)}'"
                )
                break
        cause += (
            f"; the closest region starts at line {best_index + 1} "
            f"({best_ratio:.0%} similar){diff_line}"
        )
        details = {"closestLine": best_index + 1, "similarity": round(best_ratio, 3)}
    return ToolError(
        EDIT_NOT_FOUND,
        cause,
        "read the current text with read_file and copy old_string exactly "
        "(whitespace shown as → tab, · space, ␍ CR)",
        details=details,
    )
