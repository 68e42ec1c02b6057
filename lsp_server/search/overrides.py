"""`rg --glob` overrides for the Python engine (wcmatch does the globbing).

ripgrep checks overrides before anything else: a file matching an include glob is searched
even when `.gitignore` ignores it or its name is hidden, a `!glob` match is never searched,
and when any include glob exists, a file matching none of them is skipped (folders are
not: they are still entered). The last matching glob wins. Like gitignore lines, a glob
without "/" matches a name at any depth, one with "/" matches the path relative to the
searched folder; `**` crosses folders, `{a,b}` expands, `*` does not cross "/", a trailing
"/" matches folders only.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from wcmatch import glob

from lsp_server.search.query import InvalidInclude

_FLAGS = glob.GLOBSTAR | glob.BRACE | glob.DOTGLOB


@attrs.frozen
class _Glob:
    pattern: str
    include: bool
    anchored: bool
    dir_only: bool

    @classmethod
    def parse(cls, text: str) -> _Glob:
        include = not text.startswith("!")
        body = text if include else text[1:]
        dir_only = body.endswith("/")
        body = body.rstrip("/")
        anchored = "/" in body
        return cls(body.lstrip("/"), include, anchored, dir_only)

    def matches(self, relative_path: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        subject = relative_path if self.anchored else relative_path.rsplit("/", 1)[-1]
        if self.pattern.endswith("/**") and glob.globmatch(
            subject, self.pattern[:-3], flags=_FLAGS
        ):
            return False  # `x/**` is what is inside x, not x (wcmatch would match x too)
        return bool(glob.globmatch(subject, self.pattern, flags=_FLAGS))


def check_glob(text: str) -> None:
    """Refuse what `rg --glob` refuses: unbalanced `{}` or an unclosed `[`."""
    depth = 0
    in_class = False
    for char in text:
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                raise InvalidInclude(f"error parsing glob {text!r}: unopened alternate group")
    if in_class:
        raise InvalidInclude(f"error parsing glob {text!r}: unclosed character class")
    if depth:
        raise InvalidInclude(f"error parsing glob {text!r}: unclosed alternate group")


class Overrides:
    def __init__(self, globs: Sequence[str]) -> None:
        for text in globs:
            check_glob(text)
        self._globs = [_Glob.parse(text) for text in globs if text.strip("!/")]
        self._has_include = any(g.include for g in self._globs)

    def __bool__(self) -> bool:
        return bool(self._globs)

    def decide(self, relative_path: str, is_dir: bool) -> bool | None:
        """True: search it whatever else says; False: skip it; None: no opinion."""
        for candidate in reversed(self._globs):
            if candidate.matches(relative_path, is_dir):
                return candidate.include
        if self._has_include and not is_dir:
            return False
        return None
