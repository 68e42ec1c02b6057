"""What the approval prompt offers: suggested rules (narrowest first) and a risk level."""

from __future__ import annotations

import posixpath
from typing import Literal

from lsp_server.policy.engine import CallFacts, PolicyEngine
from lsp_server.policy.rules import escape_path_pattern, quote_words
from lsp_server.shellparse.segments import Segment

Risk = Literal["low", "medium", "high"]

# Programs for which a blanket `prefix:*` suggestion would approve too much.
_NO_PREFIX_PROGRAMS = frozenset(
    (
        "rm",
        "sudo",
        "doas",
        "bash",
        "sh",
        "zsh",
        "dash",
        "eval",
        "env",
        "xargs",
        "python",
        "python3",
        "node",
        "perl",
        "ruby",
        "curl",
        "wget",
        "dd",
        "chmod",
        "chown",
        "mv",
        "cp",
    )
)
_DANGEROUS_PROGRAMS = frozenset(
    ("sudo", "doas", "dd", "mkfs", "shutdown", "reboot", "chown", "chmod", "curl", "wget", "ssh")
)


def suggested_rules(facts: CallFacts, engine: PolicyEngine) -> list[str]:
    if facts.command is not None:
        return _bash_suggestions(facts, engine)
    writes = [p for p in facts.paths if p.access == "write"] or list(facts.paths)
    relatives = [p.relative for p in writes]
    if not relatives or any(r is None for r in relatives):
        return [facts.tool]
    paths = [r for r in relatives if r is not None]
    group = "Edit" if facts.kind == "edit" else facts.tool
    rules: list[str] = []
    if len(paths) == 1:
        exact = escape_path_pattern(paths[0])
        rules += [f"{facts.tool}({exact})", f"{group}({exact})"]
    folder = posixpath.commonpath([posixpath.dirname(p) for p in paths])
    while folder:
        rules.append(f"{group}({escape_path_pattern(folder, anchor=False)}/**)")
        folder = posixpath.dirname(folder)
    rules.append(group)
    return list(dict.fromkeys(rules))


def _bash_suggestions(facts: CallFacts, engine: PolicyEngine) -> list[str]:
    parsed = facts.parsed
    if parsed.opaque:
        return []
    # Suggest only for the one simple command that nothing covers yet; a rule for a whole
    # chain cannot exist (rules match simple commands).
    uncovered = [
        s
        for s in parsed.segments
        if not engine.classifier.segment_is_read(s)
        and engine.segment_allowed(s, engine.rules.allow, facts) is None
    ]
    if len(uncovered) != 1 or uncovered[0].writes_files or not uncovered[0].words:
        return []  # `< file` alone has no program to name in a rule
    segment = uncovered[0]
    words = segment.words
    rules = [f"{facts.tool}({quote_words(words)})"]
    if words[0] not in _NO_PREFIX_PROGRAMS and "/" not in words[0] and "=" not in words[0]:
        # Shorter prefixes, dropping arguments that look like paths or values first; never
        # shorter than the program and its first word (`bash(git push:*)`): `bash(git:*)`
        # would approve every git command, the ones that write included.
        for length in range(min(len(words) - 1, 3), 1, -1):
            head = words[:length]
            if any(w.startswith("-") or "/" in w for w in head[1:]):
                continue
            rules.append(f"{facts.tool}({quote_words(head)}:*)")
    return list(dict.fromkeys(rules))


def _segment_risk(segment: Segment) -> Risk:
    words = segment.words
    if not words:
        return "low"
    program = words[0]
    flags = "".join(w for w in words[1:] if w.startswith("-") and not w.startswith("--"))
    if program in _DANGEROUS_PROGRAMS or "/" in program:
        return "high"
    if program == "rm" and ("r" in flags or "f" in flags or "--recursive" in words):
        return "high"
    if program == "git" and any(w in ("push", "reset", "clean", "rebase") for w in words[1:]):
        return "high"
    return "medium"


def risk_level(facts: CallFacts, engine: PolicyEngine) -> Risk:
    """low: reads (a command's only where the read-only sandbox holds it to reading);
    medium: edits inside the workspace, ordinary commands, and a read-looking command that
    runs where it could write (no sandbox: the prompt says it can write anywhere; or the
    workspace-write sandbox); high: commands that delete, escalate, fetch or hide what they
    run, and writes outside the roots."""
    if engine.is_plain_read(facts):
        held = facts.command is None or (facts.plan is not None and facts.plan.runs_read_only)
        return "low" if held else "medium"
    if engine.forced_ask(facts) is not None:
        return "high"  # a policy file, or a command that could do what a deny rule forbids
    if facts.command is not None:
        parsed = facts.parsed
        if parsed.opaque:
            return "high"
        levels = [_segment_risk(s) for s in parsed.segments]
        if "high" in levels:
            return "high"
        piped_to_shell = any(s.words[:1] in (("sh",), ("bash",)) for s in parsed.segments[1:])
        return "high" if piped_to_shell else "medium"
    if any(p.relative is None for p in facts.paths):
        return "high"
    if any(p.relative.startswith(".git/") for p in facts.paths if p.relative):
        return "high"
    return "medium" if facts.kind == "edit" else "low"
