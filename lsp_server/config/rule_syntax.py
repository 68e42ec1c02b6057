"""Whether a rule text parses, as the policy's parser (policy/rules.py) reads it, for the
managed file: a rule an administrator wrote must never be dropped quietly, so one that does
not parse makes the whole file fail closed. The policy package imports config, so config
checks here with the same grammar; tests/policy/test_managed_config.py holds the two to the
same verdict over a corpus."""

from __future__ import annotations

import re

import pathspec

from lsp_server.shellparse.shell_words import split_command

_RULE = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\((?P<spec>.*)\))?\s*$", re.S)


def rule_problem(text: object) -> str | None:
    """Why `text` is not a rule the policy would use, or None when it is."""
    if not isinstance(text, str) or not text.strip():
        return "empty rule"
    found = _RULE.match(text)
    if found is None:
        return f"rule {text!r} is not `Tool` or `Tool(spec)`"
    name, spec = found.group("name"), found.group("spec")
    if spec is None:
        return None
    spec = spec.strip()
    if not spec:
        return f"rule {text!r} has an empty spec"
    if name in ("bash", "Bash"):
        body = spec[:-2].rstrip() if spec.endswith(":*") else spec
        parsed = split_command(body)
        if parsed.opaque or len(parsed.segments) != 1 or parsed.segments[0].redirects:
            return f"rule {text!r}: the command must be one simple command"
        if not parsed.segments[0].words:
            return f"rule {text!r}: the command must be one simple command"
        if not spec.endswith(":*") and "*" in body:
            return f"rule {text!r}: `*` is only allowed as the `:*` suffix of a prefix"
        return None
    if spec.startswith(("!", "#")):
        return f"rule {text!r}: a pattern cannot start with {spec[0]}"
    try:
        pathspec.GitIgnoreSpec.from_lines([spec])
    except (ValueError, TypeError) as exc:
        return f"rule {text!r}: invalid pattern ({exc})"
    return None
