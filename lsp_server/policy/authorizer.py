"""The server-wide policy: the merged rules, each session's remembered rules, the round trip
to the editor (toolhost/approve) and what each answer means.

One PolicyService per server (compose.py installs it); the runtime reaches it through
`PolicyApprover` (policy/approver.py).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import attrs

from lsp_server.config.tree import PolicyConfig
from lsp_server.config.trust import TrustStore
from lsp_server.core.client import UnreadableAnswer, sent_preview
from lsp_server.core.errors import (
    PERMISSION_FORM_NOT_SHOWN,
    PERMISSION_RULE_DENIED,
    PERMISSION_UNATTENDED,
    PERMISSION_USER_DENIED,
)
from lsp_server.policy.answers import PolicyRefusal, read_answer, unreadable_refusal
from lsp_server.policy.client_approvals import (
    CLIENT_APPROVED,
    ClientApproved,
    FormNotShown,
    needs_person,
)
from lsp_server.policy.commands.command_paths import Places
from lsp_server.policy.engine import CallFacts, Decision, PathFact, PolicyEngine, RuleSet
from lsp_server.policy.persist import PersistError, persist_allow_rule
from lsp_server.policy.planner import CommandPlanner
from lsp_server.policy.prompt import (
    ApprovalAnswer,
    Asker,
    describe,
    sandbox_label,
)
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.policy.rules import Rule, RuleError, parse_rule, parse_rules
from lsp_server.policy.suggest import risk_level, suggested_rules
from lsp_server.protocol import ApproveParams
from lsp_server.runtime.approvals.verdicts import (
    ShellDetails,
)

log = logging.getLogger(__name__)


@attrs.frozen
class Authorization:
    """An allowed call: how it was allowed, for meta.approval, the audit log and didCall."""

    decision: str
    """allow (by rule, mode or fallback) | allow_once | allow_session | allow_always |
    unattended_allow"""
    rule: str | None
    note: str | None = None
    """Something the user should know (a rule that could not be saved)."""
    approved_by: str | None = None
    """The MCP client whose own permission step approved the call (--approvals client)."""


def build_engine(
    policy: PolicyConfig, problems: list[str], places: Places | None = None
) -> PolicyEngine:
    rules = RuleSet(
        allow=tuple(parse_rules(policy.allow, problems, "policy.allow")),
        ask=tuple(parse_rules(policy.ask, problems, "policy.ask")),
        deny=tuple(parse_rules(policy.deny, problems, "policy.deny")),
    )
    classifier = ReadOnlyClassifier(policy.read_only_commands, problems, places)
    return PolicyEngine(rules, policy.mode, classifier)


def relative_to_roots(real: Path, roots: Sequence[Path]) -> str | None:
    """`real` relative to the first root holding it (on the strings of the normalised paths,
    as `is_relative_to` and `relative_to` would say, without parsing them again)."""
    text = str(real)
    for root in roots:
        top = str(root)
        if text == top:
            return "."
        prefix = top if top.endswith("/") else top + "/"
        if text.startswith(prefix):
            return text[len(prefix) :]
    return None


class PolicyService:
    def __init__(
        self,
        policy: PolicyConfig,
        roots: Sequence[Path],
        trust: TrustStore,
        problems: list[str] | None = None,
        places: Places | None = None,
        *,
        planner: CommandPlanner | None = None,
    ) -> None:
        self.roots = [root.resolve() for root in roots]
        self.places = places
        self.trust = trust
        self._persist_lock = anyio.Lock()
        self.problems: list[str] = problems if problems is not None else []
        self.reconfigure(policy)
        self._session_rules: dict[str, list[Rule]] = {}
        self._always_rules: list[Rule] = []
        self.planner = planner  # the one plan of each shell call, which the bash tool takes

    def reconfigure(self, policy: PolicyConfig, problems: list[str] | None = None) -> None:
        """New configuration (workspace/didChangeConfiguration); session rules survive.
        Rules that do not parse go to `problems` (default: the list given at start)."""
        self.policy = policy
        problems = self.problems if problems is None else problems
        self.engine = build_engine(policy, problems, self.places)

    # -- facts ------------------------------------------------------------------------------
    def facts(
        self,
        *,
        tool: str,
        kind: str,
        read_only: bool,
        paths: Sequence[tuple[Path, str]],
        command: str | None = None,
        cwd: Path | None = None,
        verb: str | None = None,
        arguments: Mapping[str, Any] | None = None,
        call_id: str | None = None,
    ) -> CallFacts:
        """`paths`: (real path, "read"|"write") of every resolved path argument."""
        return CallFacts(
            tool=tool,
            kind=kind,
            read_only=read_only,
            paths=tuple(
                PathFact(
                    real,
                    relative_to_roots(real, self.roots),
                    "write" if access == "write" else "read",
                )
                for real, access in paths
            ),
            command=command,
            cwd=cwd,
            verb=verb,
            plan=(
                self.planner.plan(command, cwd, arguments or {}, call_id)
                if command is not None and self.planner is not None
                else None
            ),
        )

    def remembered_for_session(self, session: str) -> list[str]:
        """The rules the user allowed "for this session" (not the always rules)."""
        return [rule.text for rule in self._session_rules.get(session, [])]

    def remember_for_session(self, session: str, texts: Sequence[str]) -> None:
        """Rules allowed for `session` earlier (the CLI keeps them between invocations);
        one that no longer parses is dropped, so the user is asked again."""
        rules = self._session_rules.setdefault(session, [])
        for text in texts:
            try:
                rules.append(parse_rule(text))
            except RuleError as exc:
                log.warning("ignoring a remembered session rule %r: %s", text, exc)

    def session_rules(self, session: str) -> list[Rule]:
        return [*self._always_rules, *self._session_rules.get(session, [])]

    def decide(self, facts: CallFacts, session: str) -> Decision:
        return self.engine.decide(facts, self.session_rules(session))

    def request(
        self,
        facts: CallFacts,
        *,
        call_id: str,
        session: str,
        arguments: Mapping[str, Any],
        diff: str | None,
        shell: ShellDetails | None = None,
        client: str | None = None,
    ) -> ApproveParams:
        relative = [p.relative or str(p.real) for p in facts.paths]
        title, summary = describe(facts, arguments, relative, diff)
        forced = self.engine.forced_ask(facts)
        why = forced.reason if forced else None
        if why is None and facts.plan is not None:
            why = facts.plan.reading.place_concern
        elif why is None and facts.command is not None and not facts.parsed.opaque:
            why = self.engine.classifier.place_concern(facts.parsed, facts.cwd)
        if why:
            summary += f" It asks because {why}."
        return ApproveParams(
            call_id=call_id,
            session=session,
            tool=facts.tool,
            read_only=facts.read_only,
            title=title,
            summary=summary,
            arguments=dict(arguments),
            paths=[str(p.real) for p in facts.paths],
            diff=diff,
            risk=risk_level(facts, self.engine),
            suggested_rules=[] if forced else list(suggested_rules(facts, self.engine)),
            cwd=str(shell.cwd) if shell else None,
            background=shell.background if shell else None,
            timeout_ms=shell.timeout_ms if shell else None,
            sandbox=sandbox_label(facts.sandbox) if shell else None,
            client=client,
        )

    # -- the whole decision, asking when needed ---------------------------------------------
    async def authorize(
        self,
        facts: CallFacts,
        *,
        call_id: str,
        session: str,
        arguments: Mapping[str, Any],
        diff: str | None,
        ask: Asker | None,
        shell: ShellDetails | None = None,
        client: str | None = None,
    ) -> Authorization:
        """Allowed -> Authorization; refused -> PolicyRefusal(permission.*)."""
        decision = self.decide(facts, session)
        if decision.action == "allow":
            return Authorization("allow", decision.rule)
        if decision.action == "deny":
            raise PolicyRefusal(PERMISSION_RULE_DENIED, decision.reason, decision.rule)
        request = self.request(
            facts,
            call_id=call_id,
            session=session,
            arguments=arguments,
            diff=diff,
            shell=shell,
            client=client,
        )
        if isinstance(ask, ClientApproved):
            if needs_person(decision, facts) is None:
                return Authorization(CLIENT_APPROVED, decision.rule, approved_by=ask.client)
            ask = ask.person
        if ask is None:
            return self.unattended(decision, request.suggested_rules)
        answer = await self._ask(ask, request, decision)
        if decision.always_ask and answer.decision in ("allow_session", "allow_always"):
            # Policy-file writes and unseen commands ask every time: nothing is remembered.
            return Authorization("allow_once", None, "this call always asks: allowed this once")
        return await self._apply(answer, request, session, decision)

    def unattended(self, decision: Decision, rules: Sequence[str]) -> Authorization:
        if self.policy.unattended == "allow" and not decision.always_ask:
            return Authorization("unattended_allow", decision.rule)
        if decision.always_ask:
            raise PolicyRefusal(
                PERMISSION_UNATTENDED,
                f"it needs the user's approval ({decision.reason}) and no one can be asked; "
                "this call asks every time, whatever the rules and modes say: only a person "
                "answering the prompt can allow it",
                decision.rule,
            )
        rule = f' such as "{rules[0]}"' if rules else ""
        raise PolicyRefusal(
            PERMISSION_UNATTENDED,
            f"it needs the user's approval ({decision.reason}) and no one can be asked "
            "(the client declared neither toolhost approvals nor MCP elicitation); what "
            f"would allow it: an allow rule{rule} in the user's config.toml [policy] allow, "
            'or policy.unattended = "allow", or for an MCP agent `toolhost mcp --approvals '
            "client` with the tool in the agent's own allow list",
            decision.rule,
        )

    async def _ask(self, ask: Asker, request: ApproveParams, decision: Decision) -> ApprovalAnswer:
        timeout = self.policy.approval_timeout_seconds
        result: Any = None
        try:
            with anyio.move_on_after(timeout) as scope:
                result = await ask(request)
            timed_out = scope.cancelled_caught
        except TimeoutError:  # the bridge's own deadline
            timed_out = True
        except UnreadableAnswer as exc:  # logged for the editor's developer where it was read
            raise unreadable_refusal(exc) from exc
        except FormNotShown as exc:  # a headless client: nobody saw the form
            reason = exc.reason(request.suggested_rules, decision.reason)
            raise PolicyRefusal(PERMISSION_FORM_NOT_SHOWN, reason, decision.rule) from exc
        except Exception as exc:  # the editor answered with an error: nobody approved
            log.warning("toolhost/approve failed: %r", exc)
            said = sent_preview(str(exc))
            raise PolicyRefusal(
                PERMISSION_USER_DENIED, f"the editor could not show the approval (it said {said})"
            ) from exc
        if timed_out:
            raise PolicyRefusal(
                PERMISSION_USER_DENIED, f"no answer within {timeout:g} seconds counts as a denial"
            )
        return read_answer(result)

    async def _apply(
        self, answer: ApprovalAnswer, request: ApproveParams, session: str, decision: Decision
    ) -> Authorization:
        if answer.decision == "deny" and answer.dismissed:
            raise PolicyRefusal(
                PERMISSION_USER_DENIED,
                "the user dismissed the approval prompt without choosing, which counts as a denial",
            )
        if answer.decision == "deny":
            said = f"the user said: {answer.reason}" if answer.reason else "no reason given"
            raise PolicyRefusal(
                PERMISSION_USER_DENIED,
                f"the user denied it ({said}); it needed approval because {decision.reason}",
            )
        if answer.decision == "allow_once":
            return Authorization("allow_once", None)
        text = answer.rule or (request.suggested_rules[0] if request.suggested_rules else None)
        if text is None:
            return Authorization(answer.decision, None, "no rule to remember: allowed this once")
        try:
            rule = parse_rule(text)
        except RuleError as exc:
            return Authorization(answer.decision, text, f"{exc}: allowed this once")
        if answer.decision == "allow_session":
            self._session_rules.setdefault(session, []).append(rule)
            return Authorization("allow_session", rule.text)
        self._always_rules.append(rule)
        note = await self._persist(rule.text)
        return Authorization("allow_always", rule.text, note)

    async def _persist(self, rule_text: str) -> str | None:
        if not self.roots:
            return "no workspace root to save the rule in: remembered until the server stops"
        root = self.roots[0]
        try:
            async with self._persist_lock:
                await anyio.to_thread.run_sync(persist_allow_rule, root, rule_text, self.trust)
        except PersistError as exc:
            log.warning("allow_always: %s", exc)
            return f"{exc}; remembered until the server stops"
        return None
