"""A shell command line as simple commands ("segments"): what rules and the classifier see.

Policy rules match one simple command at a time, so a chain like `git status && rm -rf x`
must never look like `git status` to a rule. `split_command` reads the line with the bash
grammar (bash_split.py): each segment holds the words bash would pass (quotes, escapes,
`$'...'` decoded), its redirections apart (so a rule can refuse a command that writes a
file), which words bash computes (`expanding`) or expands against the file system
(`patterned`). Anything that runs code the words do not show makes the line `opaque`:
rules and the read-only classifier never approve an opaque command. Commands found inside
substitutions are still returned (as `nested` segments) so that deny rules see them.
"""

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


def split_command(command: str) -> ParsedCommand:
    """Segments of a command line; see the module docstring for what counts as opaque."""
    from lsp_server.policy.commands.bash_split import split_command as split

    return split(command)


def split_words(text: str) -> tuple[str, ...] | None:
    """The words of one simple command (for rule specs); None when it is not one."""
    parsed = split_command(text)
    if parsed.opaque or len(parsed.segments) != 1 or parsed.segments[0].redirects:
        return None
    return parsed.segments[0].words
