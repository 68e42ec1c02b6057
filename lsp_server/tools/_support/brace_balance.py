"""Is a slice of C-family source brace-balanced, ignoring strings and comments?"""

from __future__ import annotations

BRACE_SUFFIXES = frozenset(
    {
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".cxx",
        ".hpp",
        ".hh",
        ".java",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".go",
        ".rs",
        ".cs",
        ".kt",
        ".swift",
        ".scala",
        ".php",
        ".css",
        ".scss",
        ".dart",
        ".json",
    }
)


def unbalanced_at(source: str) -> str | None:
    """None when every brace opened in `source` closes in it; else what is wrong."""
    depth = 0
    index = 0
    length = len(source)
    while index < length:
        char = source[index]
        pair = source[index : index + 2]
        if pair == "//":
            newline = source.find("\n", index)
            index = length if newline == -1 else newline
            continue
        if pair == "/*":
            close = source.find("*/", index + 2)
            index = length if close == -1 else close + 2
            continue
        if char in "\"'`":
            index = _skip_string(source, index, char)
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                line = source.count("\n", 0, index) + 1
                return f"a '}}' on line {line} of the range closes a block opened before it"
        index += 1
    if depth > 0:
        return f"{depth} block(s) opened in the range are not closed in it"
    return None


def _skip_string(source: str, start: int, quote: str) -> int:
    index = start + 1
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if char == quote:
            return index + 1
        if char == "\n" and quote != "`":
            return index + 1  # an unterminated string ends at the line (char literals)
        index += 1
    return index
