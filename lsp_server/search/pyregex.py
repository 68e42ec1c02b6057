"""Compiling ripgrep's (Rust regex) syntax with Python's `re`, for the Python engine.

The common subset is the same in both: literals, `.`, classes, `\\d \\w \\s \\b`, anchors,
groups, alternation, repetition, `(?i)` style flags, `(?P<name>...)`. Translated here:
`(?<name>...)`, `\\z`, and the POSIX classes `[[:alpha:]]` ... Refused like ripgrep
refuses them: look-around and back-references (Rust regex has neither), and a literal
newline outside multiline mode. Unicode classes `\\p{..}` are not supported by `re` and
are refused with a note that the ripgrep engine understands them.
"""

from __future__ import annotations

import re

from lsp_server.search.query import InvalidPattern

_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7F",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


def _refuse(pattern: str, position: int, problem: str) -> InvalidPattern:
    return InvalidPattern(f"{problem} at position {position} in {pattern!r}")


def translate(pattern: str, multiline: bool) -> str:
    """Rewrite the Rust-only spellings into `re` syntax, refusing what Rust would refuse."""
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt.isdigit() and nxt != "0" and not in_class:
                raise _refuse(pattern, i, "back-references are not supported (Rust regex)")
            if nxt in "pP":
                raise _refuse(pattern, i, "Unicode classes \\p{..} need the ripgrep engine")
            if nxt == "n" and not multiline:
                raise _refuse(pattern, i, 'the literal "\\n" is not allowed without multiline')
            out.append("\\Z" if nxt == "z" and not in_class else pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            posix = re.match(r"\[:(\^?)([a-z]+):\]", pattern[i:])
            if posix and posix.group(2) in _POSIX_CLASSES:
                if posix.group(1):
                    raise _refuse(pattern, i, "negated POSIX classes need the ripgrep engine")
                out.append(_POSIX_CLASSES[posix.group(2)])
                i += posix.end()
                continue
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            out.append(char)
            i += 1
            # A "]" right after "[" or "[^" is a literal in both dialects.
            if pattern[i : i + 1] == "^":
                out.append("^")
                i += 1
            if pattern[i : i + 1] == "]":
                out.append("\\]")
                i += 1
            continue
        elif pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            raise _refuse(pattern, i, "look-around is not supported (Rust regex)")
        elif pattern.startswith("(?<", i):
            out.append("(?P<")
            i += 3
            continue
        elif char == "\n" and not multiline:
            raise _refuse(pattern, i, 'the literal "\\n" is not allowed without multiline')
        out.append(char)
        i += 1
    return "".join(out)


def compile_pattern(pattern: str, *, ignore_case: bool, multiline: bool) -> re.Pattern[str]:
    """Line anchors always (ripgrep's default); `.` never matches a newline."""
    flags = re.MULTILINE
    if ignore_case:
        flags |= re.IGNORECASE
    try:
        return re.compile(translate(pattern, multiline), flags)
    except re.error as exc:
        position = exc.pos if exc.pos is not None else 0
        raise _refuse(pattern, position, f"regex parse error: {exc.msg}") from exc
