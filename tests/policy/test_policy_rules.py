"""Rule parsing and bash/path matching, on real parsed commands (no mocks)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsp_server.policy.engine import CallFacts, PathFact, PolicyEngine, RuleSet
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.policy.rules import RuleError, escape_path_pattern, parse_rule, parse_rules
from lsp_server.shellparse.shell_words import split_command


def engine(allow=(), ask=(), deny=(), mode="default", extra=()):
    problems: list[str] = []
    rules = RuleSet(
        allow=tuple(parse_rules(list(allow), problems, "allow")),
        ask=tuple(parse_rules(list(ask), problems, "ask")),
        deny=tuple(parse_rules(list(deny), problems, "deny")),
    )
    assert problems == []
    return PolicyEngine(rules, mode, ReadOnlyClassifier(extra))


def bash(command: str) -> CallFacts:
    return CallFacts(tool="bash", kind="shell", read_only=False, command=command)


def edit(*relatives: str | None, tool: str = "edit_file") -> CallFacts:
    from pathlib import Path

    paths = tuple(PathFact(Path("/ws") / (r or "x"), r, "write") for r in relatives)
    return CallFacts(tool=tool, kind="edit", read_only=False, paths=paths)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "bash()",
        "bash(git status && rm x)",
        "bash(ls > out)",
        "Edit(!src/**)",
        "9x",
        "bash(a*b)",
    ],
)
def test_bad_rules_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(RuleError):
        parse_rule(text)


def test_git_status_rule_does_not_approve_a_chain() -> None:
    policy = engine(allow=["bash(git status)"])
    assert policy.decide(bash("git status")).action == "allow"
    assert policy.decide(bash("git status && rm -rf x")).action == "ask"
    assert policy.decide(bash("git status; rm -rf x")).action == "ask"
    assert policy.decide(bash("git status | sh")).action == "ask"
    assert policy.decide(bash("git status\nrm -rf x")).action == "ask"
    assert policy.decide(bash("git status $(rm -rf x)")).action == "ask"
    assert policy.decide(bash("git status `rm -rf x`")).action == "ask"


def test_prefix_rule_respects_word_boundaries() -> None:
    policy = engine(allow=["bash(npm run test:*)"])
    assert policy.decide(bash("npm run test:unit")).action == "allow"
    assert policy.decide(bash("npm run test")).action == "allow"
    assert policy.decide(bash("npm run test -- --watch")).action == "allow"
    assert policy.decide(bash("npm run testx")).action == "ask"
    assert policy.decide(bash("npm run tes")).action == "ask"
    assert policy.decide(bash("npm  run   'test:unit'")).action == "allow"


def test_rule_covering_every_part_approves_the_chain() -> None:
    policy = engine(allow=["bash(npm run test:*)", "bash(make:*)"])
    decision = policy.decide(bash("make build && npm run test:unit 2>&1 | head -n 5"))
    assert decision.action == "allow"
    assert decision.rule == "bash(make:*)"


def test_quoted_operators_are_words_not_separators() -> None:
    policy = engine(allow=["bash(echo:*)"])
    assert policy.decide(bash("echo 'a && rm -rf x'")).action == "allow"
    assert policy.decide(bash('echo "a; b"')).action == "allow"
    assert policy.decide(bash('echo "$(rm -rf x)"')).action == "ask"


def test_output_redirection_is_never_approved_by_a_command_rule() -> None:
    policy = engine(allow=["bash(npm run test:*)"])
    assert policy.decide(bash("npm run test > /etc/passwd")).action == "ask"
    assert policy.decide(bash("npm run test >/dev/null 2>&1")).action == "allow"


def test_deny_sees_through_wrappers_chains_and_substitutions() -> None:
    policy = engine(allow=["Bash"], deny=["bash(rm:*)"])
    for command in [
        "rm -rf x",
        "ls && rm -rf x",
        "sudo rm -rf x",
        "FOO=1 rm x",
        "echo $(rm -rf x)",
        "bash -c 'ls; rm -rf x'",
        "timeout 5 rm x",
        "find . | xargs rm",
    ]:
        assert policy.decide(bash(command)).action == "deny", command
    assert policy.decide(bash("rmdir x")).action == "allow"


def test_deny_beats_allow_and_bypass() -> None:
    policy = engine(allow=["Edit(src/**)"], deny=["Edit(src/secret/**)"], mode="bypass")
    assert policy.decide(edit("src/secret/k.py")).action == "deny"
    assert policy.decide(edit("src/a.py")).action == "allow"
    assert policy.decide(bash("anything at all")).action == "allow"


def test_ask_rules_beat_allow_rules_but_bypass_allows() -> None:
    assert engine(allow=["Edit"], ask=["Edit(*.lock)"]).decide(edit("a/b.lock")).action == "ask"
    bypass = engine(allow=["Edit"], ask=["Edit(*.lock)"], mode="bypass")
    assert bypass.decide(edit("a/b.lock")).action == "allow"


def test_read_only_mode_refuses_every_writer() -> None:
    policy = engine(allow=["Edit", "Bash"], mode="readOnly")
    assert policy.decide(edit("a.py")).action == "deny"
    assert policy.decide(bash("make")).action == "deny"
    assert policy.decide(bash("git status")).action == "allow"
    reader = CallFacts(tool="read_file", kind="read", read_only=True)
    assert policy.decide(reader).action == "allow"


def test_fallbacks_and_accept_edits() -> None:
    policy = engine()
    assert policy.decide(edit("a.py")).action == "ask"
    assert policy.decide(bash("make")).action == "ask"
    assert policy.decide(bash("ls -la && git diff | head")).action == "allow"
    accept = engine(mode="acceptEdits")
    assert accept.decide(edit("a.py")).action == "allow"
    assert accept.decide(edit(None)).action == "ask"  # outside the workspace
    assert accept.decide(bash("make")).action == "ask"


def test_path_rules_match_the_real_relative_path() -> None:
    policy = engine(allow=["Edit(src/**)"])
    assert policy.decide(edit("src/pkg/a.py")).action == "allow"
    # What a symlink src/link -> ../outside resolved to: the real path decides.
    assert policy.decide(edit("outside/a.py")).action == "ask"
    assert policy.decide(edit(None)).action == "ask"


def test_move_needs_both_paths_covered() -> None:
    policy = engine(allow=["Edit(src/**)"])
    assert policy.decide(edit("src/a.py", "src/b.py", tool="move_file")).action == "allow"
    assert policy.decide(edit("src/a.py", "lib/b.py", tool="move_file")).action == "ask"
    denying = engine(allow=["Edit"], deny=["Edit(lib/**)"])
    assert denying.decide(edit("src/a.py", "lib/b.py", tool="move_file")).action == "deny"


def test_tool_name_rules_and_groups() -> None:
    policy = engine(allow=["write_file(docs/**)"])
    assert policy.decide(edit("docs/a.md", tool="write_file")).action == "allow"
    assert policy.decide(edit("docs/a.md", tool="edit_file")).action == "ask"


def test_escaped_path_patterns_match_only_that_path() -> None:
    for relative in ["a.py", "src/[x]*.py", "docs/!important.md", "#notes"]:
        rule = parse_rule(f"Edit({escape_path_pattern(relative)})")
        assert rule.matches_path(relative)
        assert not rule.matches_path("other/" + relative)


def test_split_command_marks_hidden_code_opaque() -> None:
    for command in ["cat <<EOF\nx\nEOF", "diff <(ls) <(ls x)", "echo 'unclosed", "a `b`"]:
        assert split_command(command).opaque, command
    assert not split_command("ls -la | wc -l && echo '$(not run)'").opaque


WORDS = st.sampled_from(
    ["git", "status", "rm", "-rf", "x", "npm", "run", "test:unit", "'a b'", "ls"]
)
SEPARATORS = st.sampled_from([" && ", " || ", "; ", " | ", "\n", " & "])


@given(
    first=st.lists(WORDS, min_size=1, max_size=4),
    rest=st.lists(st.tuples(SEPARATORS, st.lists(WORDS, min_size=1, max_size=4)), min_size=1),
)
def test_a_rule_for_one_part_never_approves_a_chain_with_another(first, rest) -> None:
    command = " ".join(first) + "".join(sep + " ".join(words) for sep, words in rest)
    parts = split_command(command).segments
    rule_text = f"bash({' '.join(first)})"
    policy = engine(allow=[rule_text])
    covered = all(p.words == parts[0].words or policy.classifier.segment_is_read(p) for p in parts)
    decision = policy.decide(bash(command))
    assert (decision.action == "allow") == covered


@given(st.text(alphabet=st.sampled_from(list("ab $()`'\"\\;&|<>\n#{}=:*-12")), max_size=60))
def test_splitting_never_fails_on_any_text(command: str) -> None:
    parsed = split_command(command)
    policy = engine(allow=["bash(a:*)"], deny=["bash(b:*)"])
    decision = policy.decide(bash(command))
    # An opaque command is never approved by a command rule.
    if parsed.opaque:
        assert decision.action != "allow" or decision.rule is None
