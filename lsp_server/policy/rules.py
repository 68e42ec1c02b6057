"""Policy rules: `Tool`, `Tool(spec)` and the groups `Read`, `Edit`, `Bash`.

- File tools match `spec` as one gitignore-style pattern (pathspec) against the
  workspace-relative REAL path of each path argument.
- `bash` matches `spec` against each simple command of the command line: exactly (word by
  word, after unquoting), or `prefix:*` -- the prefix's words, the last one followed by a
  word boundary (end, whitespace, `:` or `=`), so `npm run test:*` covers `npm run test:unit`
  but not `npm run testx`.
"""

from __future__ import annotations

import re
from typing import Literal

import attrs
import pathspec

from lsp_server.policy.commands.options import option_hazard
from lsp_server.policy.commands.read_programs import script_hazard
from lsp_server.policy.commands.wrappers import opaque_reason
from lsp_server.shellparse.segments import Segment
from lsp_server.shellparse.shell_words import split_words

GROUPS = ("Read", "Edit", "Bash")
RuleList = Literal["allow", "ask", "deny"]

_RULE = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\((?P<spec>.*)\))?\s*$", re.S)
# What may follow a bash prefix inside the same word: `test:*` covers `test:unit`.
_PREFIX_BOUNDARY = frozenset(":=")


class RuleError(ValueError):
    """A rule that cannot be parsed; the text says why."""


@attrs.frozen
class Rule:
    name: str
    """A tool name (`edit_file`, `bash`) or a group (`Read`, `Edit`, `Bash`)."""
    spec: str | None
    text: str
    """The rule exactly as written (what allow_always persists and audits show)."""
    prefix: tuple[str, ...] | None = None
    """Bash prefix words for `prefix:*` specs."""
    words: tuple[str, ...] | None = None
    """Bash words for exact specs."""
    pattern: pathspec.GitIgnoreSpec | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def is_group(self) -> bool:
        return self.name in GROUPS

    def __str__(self) -> str:
        return self.text

    # -- what a rule applies to -----------------------------------------------------------
    def names_tool(self, tool: str, kind: str, read_only: bool) -> bool:
        if self.name == "Read":
            return read_only
        if self.name == "Edit":
            return kind == "edit"
        if self.name == "Bash":
            return kind == "shell"
        return self.name == tool

    def matches_path(self, relative: str | None) -> bool:
        """A workspace-relative posix path (None: outside every root, never matches)."""
        if self.pattern is None or relative is None:
            return False
        return self.pattern.match_file(relative)

    def matches_segment(self, segment: Segment) -> bool:
        """One simple command, compared word by word. A `prefix:*` rule does not cover
        words beyond its prefix that write or run code (`bash(git log:*)` does not cover
        `git log --output=f`, `bash(python:*)` not `python -c ...`)."""
        if not self.matches_words(segment.words):
            return False
        if self.prefix is None:
            return True
        if option_hazard(segment.words) is not None and option_hazard(self.prefix) is None:
            return False
        if script_hazard(segment.words) is not None and script_hazard(self.prefix) is None:
            return False  # `bash(sed -n:*)` does not cover `sed -n 'e touch f'`
        return opaque_reason(segment) is None or opaque_reason(Segment(self.prefix)) is not None

    def matches_words(self, words: tuple[str, ...]) -> bool:
        if self.words is not None:
            return words == self.words
        if self.prefix is None or len(words) < len(self.prefix):
            return False
        head, last = self.prefix[:-1], self.prefix[-1]
        if words[: len(head)] != head:
            return False
        word = words[len(self.prefix) - 1]
        if word == last:
            return True
        if not word.startswith(last):
            return False
        # `npm run test:*` must not cover `npm run testx`.
        return not last[-1:].isalnum() or word[len(last)] in _PREFIX_BOUNDARY


def parse_rule(text: str) -> Rule:
    """Parse `Tool` or `Tool(spec)`; raise RuleError with a readable reason."""
    if not isinstance(text, str) or not text.strip():
        raise RuleError("empty rule")
    found = _RULE.match(text)
    if found is None:
        raise RuleError(f"rule {text!r} is not `Tool` or `Tool(spec)`")
    name, spec = found.group("name"), found.group("spec")
    if spec is None:
        return Rule(name=name, spec=None, text=text.strip())
    spec = spec.strip()
    if not spec:
        raise RuleError(f"rule {text!r} has an empty spec; write `{name}` to mean every call")
    if name in ("bash", "Bash"):
        return _bash_rule(name, spec, text.strip())
    return _path_rule(name, spec, text.strip())


def _bash_rule(name: str, spec: str, text: str) -> Rule:
    is_prefix = spec.endswith(":*")
    body = spec[:-2].rstrip() if is_prefix else spec
    words = split_words(body)
    if not words:
        raise RuleError(
            f"rule {text!r}: the command must be one simple command "
            "(no &&, ||, ;, |, redirections or substitutions); chains need one rule per part"
        )
    if is_prefix:
        return Rule(name=name, spec=spec, text=text, prefix=words)
    if "*" in body:
        raise RuleError(f"rule {text!r}: `*` is only allowed as the `:*` suffix of a prefix")
    return Rule(name=name, spec=spec, text=text, words=words)


def _path_rule(name: str, spec: str, text: str) -> Rule:
    if spec.startswith("!"):
        raise RuleError(f"rule {text!r}: negated patterns are not rules; use a deny rule")
    if spec.startswith("#"):
        raise RuleError(f"rule {text!r}: a pattern cannot start with # (escape it as \\#)")
    try:
        pattern = pathspec.GitIgnoreSpec.from_lines([spec])
    except (ValueError, TypeError) as exc:
        raise RuleError(f"rule {text!r}: invalid pattern ({exc})") from exc
    return Rule(name=name, spec=spec, text=text, pattern=pattern)


def parse_rules(texts: list[str], problems: list[str], where: str) -> list[Rule]:
    """Parse a configured list; each bad rule becomes a problem and is skipped."""
    rules: list[Rule] = []
    for text in texts:
        try:
            rules.append(parse_rule(text))
        except RuleError as exc:
            problems.append(f"{where}: {exc}; rule ignored")
    return rules


def escape_path_pattern(relative: str, anchor: bool = True) -> str:
    """A gitignore pattern that matches exactly this workspace-relative path (`anchor=False`
    when the caller appends `/**`, which anchors the pattern anyway)."""
    escaped = re.sub(r"([\\*?\[\]!#])", r"\\\1", relative)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    # Without a slash a pattern matches at any depth: anchor root-level names.
    return escaped if not anchor or "/" in escaped.rstrip("/") else "/" + escaped


def quote_words(words: tuple[str, ...]) -> str:
    """Words back into a command text that split_words() turns into the same words."""
    import shlex

    return " ".join(
        w if re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", w) else shlex.quote(w) for w in words
    )
