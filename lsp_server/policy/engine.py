"""The decision for one call: deny > ask > allow > fallback, shaped by the mode.

Fallback: read-only tools (and plainly read-only shell commands) are allowed; file writers
and shell commands ask, except shell commands the sandbox contains (it already prevents
what the approval would guard); tools that only change session state (goals) are allowed.
Modes: `acceptEdits` allows file writers whose paths are all inside the workspace;
`readOnly` denies every writer; `bypass` turns every ask into allow. Deny rules win always.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import attrs

from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.policy.rules import Rule
from lsp_server.policy.shell_words import ParsedCommand, Segment, split_command
from lsp_server.sandbox import SandboxPlan

Action = Literal["allow", "ask", "deny"]
Mode = Literal["default", "acceptEdits", "readOnly", "bypass"]


def _expanded_words(segment: Segment) -> list[tuple[str, ...]]:
    """The segment's words, and its words without wrappers, so `sudo rm x` meets `rm:*`."""
    variants = [segment.words]
    words = segment.words
    while words:
        head = words[0]
        if "=" in head and not head.startswith("="):
            words = words[1:]  # VAR=value
        elif head in ("sudo", "doas", "env", "nohup", "time", "command", "exec", "nice", "xargs"):
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[1:]
        elif head == "timeout" and len(words) > 2:
            words = words[2:]
        else:
            break
        variants.append(words)
    return variants


def _inline_scripts(segment: Segment) -> list[Segment]:
    """`bash -c "..."`, `sh -c`, `eval ...`: the commands inside, for deny and ask rules."""
    words = segment.words
    if not words:
        return []
    if words[0] == "eval":
        return list(split_command(" ".join(words[1:])).segments)
    if words[0] in ("bash", "sh", "zsh", "dash") and "-c" in words[1:]:
        index = words.index("-c")
        if index + 1 < len(words):
            return list(split_command(words[index + 1]).segments)
    return []


def _all_segments(parsed: ParsedCommand) -> list[Segment]:
    found: list[Segment] = []
    pending = list(parsed.segments)
    while pending:
        segment = pending.pop()
        found.append(segment)
        pending.extend(_inline_scripts(segment))
    return found


@attrs.frozen
class PathFact:
    real: Path
    """Resolved real path (every symlink followed)."""
    relative: str | None
    """Workspace-relative posix path of `real`, None when outside every root."""
    access: Literal["read", "write"] = "read"


@attrs.frozen
class CallFacts:
    """What policy needs to know about a call, gathered by dispatch after validation."""

    tool: str
    kind: str
    read_only: bool
    paths: tuple[PathFact, ...] = ()
    command: str | None = None
    """The shell command line, for shell tools."""
    verb: str | None = None
    """How an approval names the action ("Edit", "Move" ...): the tool's contract entry."""
    sandbox: SandboxPlan | None = None
    """How the shell command will run (sandboxed or not), for shell tools."""

    @functools.cached_property
    def parsed(self) -> ParsedCommand:
        """The command line split once per call (empty for tools without a command)."""
        return split_command(self.command or "")

    @functools.cached_property
    def word_variants(self) -> tuple[tuple[str, ...], ...]:
        """Every simple command deny and ask rules look at: nested ones, inline scripts,
        and each with its wrappers (`sudo`, `env`, `VAR=x` ...) peeled off."""
        return tuple(
            words for segment in _all_segments(self.parsed) for words in _expanded_words(segment)
        )


@attrs.frozen
class Decision:
    action: Action
    rule: str | None
    """The rule that decided, as written; None for mode and fallback decisions."""
    reason: str
    """One sentence for the audit log and the error text."""


@attrs.frozen
class RuleSet:
    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()


class PolicyEngine:
    def __init__(self, rules: RuleSet, mode: Mode, classifier: ReadOnlyClassifier) -> None:
        self.rules = rules
        self.mode = mode
        self.classifier = classifier

    # -- matching -------------------------------------------------------------------------
    def _touches(self, rule: Rule, facts: CallFacts) -> bool:
        """For deny and ask: the rule matches ANY part of the call."""
        if not rule.names_tool(facts.tool, facts.kind, facts.read_only):
            return False
        if rule.spec is None:
            return True
        if facts.command is not None:
            return any(rule.matches_words(words) for words in facts.word_variants)
        return any(rule.matches_path(p.relative) for p in self._rule_paths(rule, facts))

    def _rule_paths(self, rule: Rule, facts: CallFacts) -> Sequence[PathFact]:
        if rule.name == "Edit":
            return [p for p in facts.paths if p.access == "write"]
        return facts.paths

    def _covers_paths(self, rule: Rule, facts: CallFacts) -> bool:
        """For allow: the rule covers EVERY path of the call (move_file: both)."""
        if not rule.names_tool(facts.tool, facts.kind, facts.read_only):
            return False
        if rule.spec is None:
            return True
        paths = self._rule_paths(rule, facts)
        return bool(paths) and all(rule.matches_path(p.relative) for p in paths)

    def segment_allowed(
        self, segment: Segment, rules: Sequence[Rule], facts: CallFacts
    ) -> Rule | None:
        for rule in rules:
            if (
                rule.spec is not None
                and rule.names_tool(facts.tool, facts.kind, facts.read_only)
                and rule.matches_segment(segment)
                and not segment.writes_files
            ):
                return rule
        return None

    def _allowed_by(self, rules: Sequence[Rule], facts: CallFacts) -> Rule | None:
        if facts.command is None:
            return next((r for r in rules if self._covers_paths(r, facts)), None)
        bare = next(
            (
                r
                for r in rules
                if r.spec is None and r.names_tool(facts.tool, facts.kind, facts.read_only)
            ),
            None,
        )
        if bare is not None:
            return bare
        parsed = facts.parsed
        if parsed.opaque or not parsed.segments:
            return None
        # Every simple command must be covered by a rule or be a plain read; the chain
        # is approved by the first rule that took part.
        deciding: Rule | None = None
        for segment in parsed.segments:
            rule = self.segment_allowed(segment, rules, facts)
            if rule is None and not self.classifier.segment_is_read(segment):
                return None
            deciding = deciding or rule
        return deciding

    def is_plain_read(self, facts: CallFacts) -> bool:
        if facts.read_only:
            return True
        if facts.command is not None:
            return self.classifier.is_read(facts.parsed)
        return False

    # -- the decision ---------------------------------------------------------------------
    def decide(self, facts: CallFacts, session_rules: Iterable[Rule] = ()) -> Decision:
        for rule in self.rules.deny:
            if self._touches(rule, facts):
                return Decision("deny", rule.text, f"denied by the rule {rule.text}")
        plain_read = self.is_plain_read(facts)
        if self.mode == "readOnly" and not plain_read:
            return Decision(
                "deny", None, "the policy mode is readOnly: no tool may change anything"
            )
        for rule in self.rules.ask:
            if self._touches(rule, facts):
                if self.mode == "bypass":
                    return Decision("allow", rule.text, "bypass mode turns the ask rule into allow")
                return Decision("ask", rule.text, f"the rule {rule.text} asks")
        allow = self._allowed_by([*self.rules.allow, *session_rules], facts)
        if allow is not None:
            return Decision("allow", allow.text, f"allowed by the rule {allow.text}")
        return self._fallback(facts, plain_read)

    def _fallback(self, facts: CallFacts, plain_read: bool) -> Decision:
        if plain_read:
            what = "read-only tool" if facts.read_only else "read-only shell command"
            return Decision("allow", None, f"a {what} is allowed by default")
        if self.mode == "bypass":
            return Decision("allow", None, "bypass mode allows every call that no rule denies")
        if facts.kind == "state":
            return Decision("allow", None, "a tool that only changes session state is allowed")
        if (
            self.mode == "acceptEdits"
            and facts.kind == "edit"
            and all(p.relative is not None for p in facts.paths)
        ):
            return Decision(
                "allow", None, "acceptEdits mode allows file edits inside the workspace"
            )
        if facts.sandbox is not None and facts.sandbox.contained:
            return Decision(
                "allow",
                None,
                f"the command runs in the sandbox ({facts.sandbox.mode}), which already "
                "prevents writes outside the workspace and network access",
            )
        if facts.sandbox is not None:
            return Decision("ask", None, f"of how it would run: {facts.sandbox.describe()}")
        return Decision("ask", None, "changes need the user's approval by default")
