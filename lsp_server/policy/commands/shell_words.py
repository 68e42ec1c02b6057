"""Split a shell command line into simple commands ("segments"), respecting quotes.

Policy rules match one simple command at a time, so a chain like `git status && rm -rf x`
must never look like `git status` to a rule. This is a deliberately small bash lexer:

- words are unquoted the way bash does it ('...', "...", backslash escapes);
- `&&`, `||`, `;`, `|`, `|&`, `&`, newlines and `(` `)` separate segments;
- redirections (`>`, `>>`, `2>`, `&>`, `<`, `<<<`, `>&` ...) are kept apart from the words,
  with their targets, so a rule can refuse to approve a command that writes a file;
- anything that runs code the words do not show -- `$(...)`, backticks, `<(...)`, `>(...)`,
  here-documents, unbalanced quotes -- makes the parse `opaque`: rules and the read-only
  classifier never approve an opaque command. Commands found inside substitutions are still
  returned (as `nested` segments) so that deny rules see them.
"""

from __future__ import annotations

import re

import attrs

# Characters that end a word when unquoted.
_METACHARS = frozenset(" \t\n;&|()<>")
_PARAMETER = re.compile(r"[A-Za-z_{0-9@*#?$!-]")
_SEPARATORS = ("&&", "||", "|&", ";;", ";", "|", "&", "\n", "(", ")")


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


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.segments: list[Segment] = []
        self.reasons: list[str] = []
        self.words: list[str] = []
        self.redirects: list[Redirect] = []
        self.pending_redirect: str | None = None
        self.expanding: set[int] = set()
        self.patterned: set[int] = set()
        self.word_expands = False
        self.word_patterned = False

    # -- segments -------------------------------------------------------------------------
    def end_segment(self) -> None:
        if self.pending_redirect is not None:
            self.reasons.append("redirection without a target")
            self.pending_redirect = None
        if self.words or self.redirects:
            self.segments.append(
                Segment(
                    tuple(self.words),
                    tuple(self.redirects),
                    expanding=frozenset(self.expanding),
                    patterned=frozenset(self.patterned),
                )
            )
        self.words = []
        self.redirects = []
        self.expanding = set()
        self.patterned = set()

    def add_word(self, word: str) -> None:
        if self.pending_redirect is not None:
            self.redirects.append(Redirect(self.pending_redirect, word))
            self.pending_redirect = None
        else:
            if self.word_expands:
                self.expanding.add(len(self.words))
            if self.word_patterned:
                self.patterned.add(len(self.words))
            self.words.append(word)

    def nested(self, inner: str) -> None:
        parsed = split_command(inner)
        self.reasons.extend(parsed.reasons)
        self.segments.extend(attrs.evolve(s, nested=True) for s in parsed.segments)

    # -- scanning -------------------------------------------------------------------------
    def run(self) -> ParsedCommand:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t":
                self.pos += 1
            elif char == "\\" and text.startswith("\\\n", self.pos):
                self.pos += 2  # line continuation
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif self.at_redirect():
                continue
            elif op := self.at_separator():
                self.pos += len(op)
                self.end_segment()
            else:
                self.add_word(self.read_word())
        self.end_segment()
        return ParsedCommand(tuple(self.segments), bool(self.reasons), tuple(self.reasons))

    def at_separator(self) -> str | None:
        for op in _SEPARATORS:
            if self.text.startswith(op, self.pos):
                return op
        return None

    def at_redirect(self) -> bool:
        """Consume a redirection operator (with an optional fd number before it)."""
        text = self.text
        start = self.pos
        index = start
        while index < len(text) and text[index].isdigit():
            index += 1
        if text.startswith(("<(", ">("), index):
            self.reasons.append("process substitution")
            inner, self.pos = _balanced(text, index + 2, "(", ")")
            if inner is None:
                self.reasons.append("unbalanced process substitution")
                self.pos = len(text)
            else:
                self.nested(inner)
            return True
        for op in ("&>>", "&>", ">>", ">&", ">|", "<<<", "<<-", "<<", "<&", "<>", ">", "<"):
            if text.startswith(op, index) and (op[0] != "&" or index == start):
                if op.startswith("<<") and op != "<<<":
                    self.reasons.append("here-document")
                self.pending_redirect = text[start:index] + op
                self.pos = index + len(op)
                return True
        return False

    def read_word(self) -> str:
        text = self.text
        out: list[str] = []
        self.word_expands = False
        self.word_patterned = text.startswith("~", self.pos)
        while self.pos < len(text):
            char = text[self.pos]
            if char in _METACHARS:
                break
            if char in "*?[{":
                self.word_patterned = True
            if self.at_parameter():
                self.word_expands = True
            if char == "\\":
                if self.pos + 1 < len(text):
                    out.append(text[self.pos + 1])
                self.pos += 2
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    self.reasons.append("unbalanced single quote")
                    out.append(text[self.pos + 1 :])
                    self.pos = len(text)
                else:
                    out.append(text[self.pos + 1 : end])
                    self.pos = end + 1
            elif char == '"':
                out.append(self.read_double_quoted())
            elif char == "`" or text.startswith("$(", self.pos):
                out.append(self.read_substitution())
            else:
                out.append(char)
                self.pos += 1
        return "".join(out)

    def read_double_quoted(self) -> str:
        text = self.text
        self.pos += 1
        out: list[str] = []
        while self.pos < len(text):
            char = text[self.pos]
            if char == '"':
                self.pos += 1
                return "".join(out)
            if char == "\\" and self.pos + 1 < len(text) and text[self.pos + 1] in '$`"\\\n':
                out.append(text[self.pos + 1])
                self.pos += 2
            elif char == "`" or text.startswith("$(", self.pos):
                out.append(self.read_substitution())
            else:
                self.word_expands = self.word_expands or self.at_parameter()
                out.append(char)
                self.pos += 1
        self.reasons.append("unbalanced double quote")
        return "".join(out)

    def at_parameter(self) -> bool:
        """At `$name`, `${...}`, `$1`, `$@` ...: a value bash fills in."""
        return self.text.startswith("$", self.pos) and bool(
            _PARAMETER.match(self.text, self.pos + 1)
        )

    def read_substitution(self) -> str:
        """`$(...)`, `$((...))` or a backtick substitution: opaque, inner commands nested."""
        text = self.text
        start = self.pos
        self.word_expands = True
        if text.startswith("$((", start):
            inner, self.pos = _balanced(text, start + 3, "((", "))")
            if inner is None:
                self.reasons.append("unbalanced arithmetic expansion")
                self.pos = len(text)
                return text[start:]
            # Arithmetic can still hide a command substitution: look inside.
            if "$(" in inner or "`" in inner:
                self.reasons.append("command substitution")
                self.nested(inner)
            return text[start : self.pos]
        self.reasons.append("command substitution")
        if text[start] == "`":
            end = text.find("`", start + 1)
            if end < 0:
                self.reasons.append("unbalanced backtick")
                self.pos = len(text)
                return text[start:]
            self.nested(text[start + 1 : end])
            self.pos = end + 1
            return text[start : self.pos]
        inner, self.pos = _balanced(text, start + 2, "(", ")")
        if inner is None:
            self.reasons.append("unbalanced command substitution")
            self.pos = len(text)
            return text[start:]
        self.nested(inner)
        return text[start : self.pos]


def _balanced(text: str, start: int, opening: str, closing: str) -> tuple[str | None, int]:
    """Find the `closing` that matches an already-consumed `opening`, skipping quotes."""
    depth = 1
    index = start
    while index < len(text):
        if text.startswith(closing, index):
            depth -= 1
            if depth == 0:
                return text[start:index], index + len(closing)
            index += len(closing)
            continue
        if text.startswith(opening, index):
            depth += 1
            index += len(opening)
            continue
        char = text[index]
        if char == "\\":
            index += 2
        elif char == "'":
            end = text.find("'", index + 1)
            index = len(text) if end < 0 else end + 1
        elif char == '"':
            index += 1
            while index < len(text) and text[index] != '"':
                index += 2 if text[index] == "\\" else 1
            index += 1
        else:
            index += 1
    return None, len(text)


def split_command(command: str) -> ParsedCommand:
    """Segments of a command line; see the module docstring for what counts as opaque."""
    return _Lexer(command).run()


def split_words(text: str) -> tuple[str, ...] | None:
    """The words of one simple command (for rule specs); None when it is not one."""
    parsed = split_command(text)
    if parsed.opaque or len(parsed.segments) != 1 or parsed.segments[0].redirects:
        return None
    return parsed.segments[0].words
