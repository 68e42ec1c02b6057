"""The decision for one call: deny > ask > allow > fallback, shaped by the mode.

Fallback: read-only tools (and plainly read-only shell commands) are allowed; file writers
and shell commands ask, except shell commands the sandbox contains (it already prevents
what the approval would guard); tools that only change session state (goals) are allowed.
Modes: `acceptEdits` allows file writers whose paths are all inside the workspace;
`readOnly` denies every writer; `bypass` turns every ask into allow. Deny rules win always.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import attrs

from lsp_server.policy.command_plan import CommandPlan
from lsp_server.policy.commands.wrappers import CommandView, command_forms, view_command
from lsp_server.policy.guards import (
    deny_could_match,
    git_discard,
    policy_file_reason,
    root_deletion,
)
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.policy.rules import Rule
from lsp_server.sandbox import SandboxPlan
from lsp_server.shellparse.segments import ParsedCommand, Segment
from lsp_server.shellparse.shell_words import split_command

_NET = ("/dev/tcp/", "/dev/udp/")

Action = Literal["allow", "ask", "deny"]
Mode = Literal["default", "acceptEdits", "readOnly", "bypass"]


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
    cwd: Path | None = None
    """The folder a shell command runs in."""
    verb: str | None = None
    """How an approval names the action ("Edit", "Move" ...): the tool's contract entry."""
    plan: CommandPlan | None = None
    """The shell command's one plan (planner.py): its parse, what the classifier says and
    how it runs. Without one (unit tests, benchmarks) the engine classifies it itself."""

    @property
    def sandbox(self) -> SandboxPlan | None:
        """How the shell command will run (sandboxed or not), for shell tools."""
        return self.plan.sandbox if self.plan is not None else None

    @functools.cached_property
    def parsed(self) -> ParsedCommand:
        """The command line split once per call (empty for tools without a command)."""
        if self.plan is not None:
            return self.plan.parsed
        return split_command(self.command or "")

    @functools.cached_property
    def view(self) -> CommandView:
        """Every simple command it runs (inline scripts included) and what is opaque."""
        if self.plan is not None:
            return self.plan.view
        return view_command(self.parsed, self.command)

    @functools.cached_property
    def word_variants(self) -> tuple[tuple[str, ...], ...]:
        """Every simple command deny and ask rules look at: nested ones, inline scripts,
        and each with its wrappers (`sudo`, `nice -n 5`, `VAR=x` ...) peeled off and its
        program also by bare name (`/usr/bin/touch` -> `touch`); see wrappers.py."""
        return tuple(
            form
            for segment in self.view.segments
            if segment.words
            for form in command_forms(segment.words)
        )


@attrs.frozen
class Decision:
    action: Action
    rule: str | None
    """The rule that decided, as written; None for mode and fallback decisions."""
    reason: str
    """One sentence for the audit log and the error text."""
    always_ask: bool = False
    """Asks whatever the mode (guards.py): no unattended allow, no remembered rule."""


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
        # One classification per call: it may ask git about the repository's config.
        self._reads: weakref.WeakKeyDictionary[CallFacts, bool] = weakref.WeakKeyDictionary()

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
        if parsed.opaque or facts.view.opaque or not parsed.segments:
            return None
        # Every simple command must be covered by a rule or be a plain read; the chain
        # is approved by the first rule that took part.
        deciding: Rule | None = None
        for segment in parsed.segments:
            rule = self.segment_allowed(segment, rules, facts)
            if rule is None and not self.classifier.segment_is_read(segment, facts.cwd):
                return None
            deciding = deciding or rule
        return deciding

    def is_plain_read(self, facts: CallFacts) -> bool:
        if facts.read_only:
            return True
        if facts.command is None:
            return False
        if facts.plan is not None:
            return facts.plan.plain_read
        known = self._reads.get(facts)
        if known is None:
            known = not facts.view.opaque and self.classifier.is_read(facts.parsed, facts.cwd)
            self._reads[facts] = known
        return known

    def forced_ask(self, facts: CallFacts) -> Decision | None:
        """A call that asks in every mode, whatever allow rules say (guards.py): a write
        to a protected file (policy, or one that makes programs run code), a recursive
        delete of a folder holding the workspace, or a command a deny rule could match
        unseen."""
        places = self.classifier.places
        if places is not None:
            writes = [p.real for p in facts.paths if p.access == "write"]
            shell = None
            if (
                facts.command is not None
                and facts.cwd is not None
                and not self.is_plain_read(facts)
                and not (facts.plan is not None and facts.plan.runs_read_only)
            ):
                # In the sandbox, protected names are read-only already (mostly).
                sandboxed = facts.sandbox is not None and facts.sandbox.sandboxed
                shell = (facts.view.segments, facts.cwd, sandboxed)
            reason = policy_file_reason(writes, shell, places)
            if reason is None and shell is not None:
                reason = root_deletion(*shell[:2], places.roots, shell[2])
            if reason is None and shell is not None:
                reason = git_discard(shell[0], shell[1], places.activity)
            if reason is not None:
                return Decision("ask", None, reason, True)
        if facts.command is not None:
            reason = deny_could_match(
                self.rules.deny, facts.tool, facts.kind, facts.view.segments, facts.view.opaque
            )
            if reason is not None:
                return Decision("ask", None, reason, True)
        return None

    # -- the decision ---------------------------------------------------------------------
    def decide(self, facts: CallFacts, session_rules: Iterable[Rule] = ()) -> Decision:
        for rule in self.rules.deny:
            if self._touches(rule, facts):
                return Decision("deny", rule.text, f"denied by the rule {rule.text}")
        plain_read = self.is_plain_read(facts)
        if self.mode == "readOnly":
            refusal = self._read_only_denies(facts, plain_read)
            if refusal is not None:
                return Decision("deny", None, refusal)
        forced = self.forced_ask(facts)
        if forced is not None:
            return forced
        for rule in self.rules.ask:
            if self._touches(rule, facts):
                if self.mode == "bypass":
                    return Decision("allow", rule.text, "bypass mode turns the ask rule into allow")
                return Decision("ask", rule.text, f"the rule {rule.text} asks")
        allow = self._allowed_by([*self.rules.allow, *session_rules], facts)
        if allow is not None:
            return Decision("allow", allow.text, f"allowed by the rule {allow.text}")
        return self._fallback(facts, plain_read)

    def _read_only_denies(self, facts: CallFacts, plain_read: bool) -> str | None:
        """readOnly mode: the read-only sandbox enforces it where it runs (every command
        runs there, nothing can change); elsewhere only plain reads run."""
        plan = facts.plan
        if plan is not None and plan.sandbox.escalation is not None:
            return (
                "the policy mode is readOnly: commands run only in the read-only sandbox, "
                'without network (sandbox: "network" and "off" are refused)'
            )
        if plain_read:
            return None
        if plan is not None and plan.runs_read_only and plan.reading.place_concern is None:
            return None  # what it reads needs no eye, and it cannot write
        return self._read_only_refusal(facts)

    def _read_concern(self, facts: CallFacts) -> str | None:
        """A secret or outside file that some part of the command names, or a repository
        git config that runs programs."""
        if facts.plan is not None:
            return facts.plan.reading.place_concern
        if facts.cwd is None:
            return None
        for segment in facts.view.segments:
            if facts.sandbox is not None and not facts.sandbox.network:
                # bash's /dev/tcp and /dev/udp are the network, which the sandbox cuts off.
                kept = tuple(r for r in segment.redirects if not r.target.startswith(_NET))
                segment = attrs.evolve(segment, redirects=kept)
            concern = self.classifier.segment_place_concern(segment, facts.cwd)
            if concern is not None:
                return concern
        return None

    def _read_only_refusal(self, facts: CallFacts) -> str:
        """readOnly mode's reason; for a command of read-only programs, what made it more."""
        reason = "the policy mode is readOnly: no tool may change anything"
        if facts.command is None:
            return reason
        if facts.plan is not None:
            concern = facts.plan.reading.concern
        else:
            concern = facts.view.opaque[0] if facts.view.opaque else None
            concern = concern or self.classifier.concern(facts.parsed, facts.cwd)
        return f"{reason}, and this is not a plain read: {concern}" if concern else reason

    def _fallback(self, facts: CallFacts, plain_read: bool) -> Decision:
        escalation = facts.sandbox.escalation if facts.sandbox is not None else None
        if plain_read and escalation is None:
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
            concern = self._read_concern(facts)
            if concern is not None:
                # The sandbox stops writes outside and the network, not reads.
                return Decision("ask", None, f"{concern} (the sandbox does not stop reads)")
            if facts.sandbox.mode == "read-only":
                prevents = "every write and network access"
            else:
                prevents = "writes outside the workspace and network access"
            return Decision(
                "allow",
                None,
                f"the command runs in the sandbox ({facts.sandbox.mode}), which already "
                f"prevents {prevents}",
            )
        if facts.sandbox is not None:
            return Decision("ask", None, f"of how it would run: {facts.sandbox.describe()}")
        return Decision("ask", None, "changes need the user's approval by default")
