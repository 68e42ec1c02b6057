"""A gitignore pattern list as one compiled regex, for testing many paths quickly.

`GitIgnoreSpec.match_file` runs one regex per pattern in Python (17 for the secret deny
list) and sorts out negations and directory priorities; when the list has no negation,
a path matches exactly when one of the patterns' regexes is found in it, so the regexes
joined by `|` give the same answer in one call (pathspec's own re2 and hyperscan backends join them
the same way). Lists with a negation keep `match_file`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs
import pathspec
from pathspec.pattern import RegexPattern
from pathspec.util import NORMALIZE_PATH_SEPS, normalize_file


def _alternative(pattern: RegexPattern) -> str | None:
    """The pattern's regex without its named groups (pathspec marks a directory match
    with one; whether a path matches does not depend on it), or None when it cannot be
    joined."""
    regex = pattern.regex
    if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
        return None
    if regex.flags != re.UNICODE:  # compiled with flags the joined regex would not have
        return None
    source = regex.pattern
    for name in regex.groupindex:
        source = source.replace(f"(?P<{name}>", "(?:")
    return None if "(?P" in source else source


# How pathspec starts the regex of a pattern that may match at any depth.
_ANY_FOLDER = "^(?:.+/)?"


def join_alternatives(alternatives: list[str]) -> str:
    """One regex for "any of these is found". Those that start by skipping any folders
    share that start (`A(B|C)` finds what `AB|AC` finds): the regex then walks back
    through a path's folders once, not once per pattern, three times faster on the deny
    list."""
    shared = [a.removeprefix(_ANY_FOLDER) for a in alternatives if a.startswith(_ANY_FOLDER)]
    rest = [f"(?:{a})" for a in alternatives if not a.startswith(_ANY_FOLDER)]
    if shared:
        rest.insert(0, _ANY_FOLDER + "(?:" + "|".join(f"(?:{a})" for a in shared) + ")")
    return "|".join(rest)


def any_match(spec: pathspec.GitIgnoreSpec) -> Callable[[str], bool]:
    """A test equal to `spec.match_file(path)` for '/'-separated relative paths."""
    active = [p for p in spec.patterns if p.include is not None]
    if not active or any(not p.include for p in active):
        return spec.match_file
    alternatives = [_alternative(p) for p in active]
    if any(a is None for a in alternatives):
        return spec.match_file
    joined = re.compile(join_alternatives([a for a in alternatives if a is not None]))

    def match(path: str) -> bool:
        # normalize_file, inline: on POSIX it only drops a leading "/" or "./".
        if path.startswith(("/", "./")) or NORMALIZE_PATH_SEPS:
            path = normalize_file(path)
        return joined.search(path) is not None

    return match


def any_pattern(spec: pathspec.GitIgnoreSpec) -> Callable[[str], bool]:
    """True when some line of `spec`, a `!` line or not, matches the path: a quick "no
    line has an opinion" before the exact, slower `check_file`. Always True when the
    lines cannot be joined."""
    active = [p for p in spec.patterns if p.include is not None]
    alternatives = [_alternative(p) for p in active]
    if not active:
        return lambda path: False
    if any(a is None for a in alternatives):
        return lambda path: True
    joined = re.compile(join_alternatives([a for a in alternatives if a is not None]))

    def match(path: str) -> bool:
        if path.startswith(("/", "./")) or NORMALIZE_PATH_SEPS:
            path = normalize_file(path)
        return joined.search(path) is not None

    return match


# What splits a gitignore pattern into runs of characters a matching path holds as they
# are: wildcards, the folder separator. A bracket or an escape gives no hint at all.
_NOT_PLAIN = re.compile(r"[*?/]")


def required_text(
    spec: pathspec.GitIgnoreSpec, *, visible: bool = False, any_line: bool = False
) -> tuple[str, ...] | None:
    """Literal runs such that every path `spec` matches holds one of them (each pattern's
    longest run of plain characters; a run that holds a shorter one is left to it): a
    listing of thousands of paths that holds none has no match, found with a few
    substring scans of the whole text (C speed) instead of a regex a path. None when
    some pattern has no such run (`*`, a bracket, an escape, a negation). `visible`:
    only for the paths without a hidden name (leaves out the patterns that name one,
    `.env`, `.ssh/`: they match nothing else). `any_line`: for `any_pattern` (a `!` line
    counts as the line without its `!`)."""
    runs: set[str] = set()
    for pattern in spec.patterns:
        if pattern.include is None:
            continue
        text = pattern.pattern if isinstance(pattern.pattern, str) else None
        if text is not None and any_line and not pattern.include:
            text = text.removeprefix("!")
        elif not pattern.include:
            return None
        if text is None or "[" in text or "\\" in text:
            return None
        if not isinstance(pattern, RegexPattern) or _alternative(pattern) is None:
            return None  # compiled with flags (a case-blind list)
        if visible and any(part.strip().startswith(".") for part in text.split("/")):
            continue
        longest = max((run.strip() for run in _NOT_PLAIN.split(text)), key=len, default="")
        if not longest:
            return None
        runs.add(longest)
    return tuple(sorted(run for run in runs if not any(o in run for o in runs if o != run)))


@attrs.frozen
class PathTest:
    """A gitignore list's test of one '/'-separated relative path (`any_match`), and the
    texts one of which every path it matches holds (`required_text`), to skip the test
    in bulk."""

    match: Callable[[str], bool]
    hint: tuple[str, ...] | None
    visible_hint: tuple[str, ...] | None
    """The hint for paths without a hidden name."""

    @classmethod
    def of(cls, lines: tuple[str, ...]) -> PathTest:
        spec = pathspec.GitIgnoreSpec.from_lines(list(lines))
        return cls(any_match(spec), required_text(spec), required_text(spec, visible=True))

    def may_match(self, text: str, hidden: bool = True) -> bool:
        """False when no path in `text` can match (it holds none of the hint's texts);
        `hidden=False` says that no name in `text` starts with a dot."""
        hint = self.hint if hidden else self.visible_hint
        return hint is None or any(run in text for run in hint)
