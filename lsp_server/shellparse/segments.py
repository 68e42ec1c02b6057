"""What the bash parser hands back: a command line as simple commands ("segments"),
their words and redirections (split_command in shell_words.py builds them)."""

from __future__ import annotations

import attrs


@attrs.frozen
class Redirect:
    operator: str
    """As written, with any fd number: `>`, `2>>`, `&>`, `<`, `>&` ..."""
    target: str
    """The unquoted target word ("" for a here-document)."""

    @property
    def writes(self) -> bool:
        """True when the redirect can create or change a file."""
        if ">" not in self.operator:
            return False  # <, <<<, <& only read
        if self.target in _HARMLESS_TARGETS:
            return False
        # `2>&1`, `>&2`, `>&-` duplicate or close a descriptor; `>&file` writes a file.
        return not (self.operator.endswith("&") and (self.target.isdigit() or self.target == "-"))


_HARMLESS_TARGETS = frozenset(("/dev/null", "/dev/stdout", "/dev/stderr"))


@attrs.frozen
class Segment:
    """One simple command: its unquoted words and its redirections."""

    words: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    nested: bool = False
    """Found inside a command or process substitution."""
    expanding: frozenset[int] = frozenset()
    """Indices of words whose value bash computes (`$X`, `${X}`, `$(...)`): unknown here."""
    patterned: frozenset[int] = frozenset()
    """Indices of words with unquoted glob, brace or tilde characters (`*.env`, `~/x`)."""

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def writes_files(self) -> bool:
        return any(r.writes for r in self.redirects)


@attrs.frozen
class ParsedCommand:
    segments: tuple[Segment, ...]
    opaque: bool
    """Runs code that its words do not show (substitutions, here-docs, bad quoting)."""
    reasons: tuple[str, ...] = ()

    @property
    def top_level(self) -> tuple[Segment, ...]:
        return tuple(s for s in self.segments if not s.nested)
