"""The one place that hands untrusted text to tree-sitter-bash, made safe for it.

tree-sitter-bash 0.25.1's external scanner (C) can crash the whole process on some
strings with characters outside the Basic Multilingual Plane (`{` followed by U+FCE39
segfaults in about one run of three), and no Python `except` catches a segfault. bash's
syntax is ASCII: every character outside it is an ordinary word character to bash. So the
text is parsed with each non-ASCII character (and each lone surrogate) replaced by the
ASCII letter `a`, which plays the same role; node offsets then count characters of the
original text, which callers slice for the real values. `tests/policy/fuzz_bash_parse.py`
runs a million parses of hostile strings in a child process in CI to keep it honest.
"""

from __future__ import annotations

import functools
import re

import tree_sitter
import tree_sitter_bash

MAX_NODES = 20_000
"""Nodes a caller walks at most; a bigger tree is too large to check (opaque)."""
MAX_CHARS = 100_000
"""Longer text is not parsed at all (opaque: the policy asks)."""
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


@functools.cache
def _language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_bash.language())


def ascii_stand_in(text: str) -> str:
    """`text` with every non-ASCII character replaced by `a` (same length)."""
    return _NOT_ASCII.sub("a", text)


def parse(text: str) -> tree_sitter.Tree | None:
    """The bash syntax tree of `text` (byte offsets = character offsets of `text`), or
    None when the text is too long to parse."""
    if len(text) > MAX_CHARS:
        return None
    return tree_sitter.Parser(_language()).parse(ascii_stand_in(text).encode("ascii"))
