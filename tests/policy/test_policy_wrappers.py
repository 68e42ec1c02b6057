"""Deny rules that hold behind wrappers, opaque commands that ask, and the classifier's
reading of abbreviated and code-running options (issue 18 item 4, issue 20 item 4).

These decide on real parsed commands; test_policy_escapes_e2e.py runs the same tricks
through `toolhost serve` and checks that no file appears."""

from __future__ import annotations

import pytest

from lsp_server.policy.engine import CallFacts, PolicyEngine, RuleSet
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.policy.rules import parse_rules
from lsp_server.shellparse.shell_words import split_command


def engine(allow=(), deny=(), mode="default"):
    problems: list[str] = []
    rules = RuleSet(
        allow=tuple(parse_rules(list(allow), problems, "allow")),
        deny=tuple(parse_rules(list(deny), problems, "deny")),
    )
    assert problems == []
    return PolicyEngine(rules, mode, ReadOnlyClassifier())


def bash(command: str) -> CallFacts:
    return CallFacts(tool="bash", kind="shell", read_only=False, command=command)


DENIED_BEHIND_WRAPPERS = [
    "touch f",
    "/usr/bin/touch f",
    "./touch f",
    "setsid touch f",
    "setsid -f touch f",
    "nohup touch f",
    "nice touch f",
    "nice -n 5 touch f",
    "nice -5 touch f",
    "nice --adjustment=5 touch f",
    "timeout 5 touch f",
    "timeout -s KILL 5 touch f",
    "timeout --signal KILL -k 1 5s touch f",
    "env touch f",
    "env -u X touch f",
    "env -i -C . X=1 touch f",
    "env -S 'touch f'",
    "echo f | xargs touch",
    "echo f | xargs -n 1 -P 2 touch",
    "stdbuf -o0 touch f",
    "stdbuf -o 0 -e L touch f",
    "command touch f",
    "command -p touch f",
    "exec touch f",
    "sudo touch f",
    "sudo -u root -- touch f",
    "time -p touch f",
    "X=1 touch f",
    "bash -c 'touch f'",
    "sh -c 'nice touch f'",
    "bash -xc 'touch f'",
    "bash -c 'exec -a foo touch f'",
    "bash -c \"bash -c 'touch f'\"",
    "eval touch f",
    "if true; then touch f; fi",
    "for x in f; do touch $x; done",
    "! touch f",
    "{ touch f; }",
    "find . -maxdepth 0 -exec touch f ;",
    "watch -n 1 touch f",
    "flock /tmp/l touch f",
    "ionice -c 3 touch f",
    "busybox touch f",
    "true && touch f",
]


@pytest.mark.parametrize("command", DENIED_BEHIND_WRAPPERS)
def test_deny_rule_holds_behind_wrappers_in_bypass(command: str) -> None:
    decision = engine(deny=["bash(touch:*)"], mode="bypass").decide(bash(command))
    assert decision.action == "deny", (command, decision)
    assert decision.rule == "bash(touch:*)"


ASK_DESPITE_BYPASS = [
    "$(echo touch) f",
    "`echo touch` f",
    "t=touch; $t f",
    "${T:-touch} f",
    'python3 -c \'open("f", "w")\'',
    "python -Bc 'import os'",
    'node -e \'require("fs").writeFileSync("f", "")\'',
    "perl -e 'open(F, \">f\")'",
    'ruby -e \'File.write("f", "")\'',
    "echo 'touch f' | sh",
    "echo 'touch f' | bash -s",
    "python3 - <<< 'open(1)'",
    "awk 'BEGIN { system(\"touch f\") }'",
    "echo touch | xargs -I{} {} f",
    "source ./script.sh",
    "cp /dev/null f",
    "install /dev/null f",
    "tee f < /dev/null",
    "dd if=/dev/null of=f",
    "truncate -s 0 f",
    "echo > f",
    ": > f",
]


@pytest.mark.parametrize("command", ASK_DESPITE_BYPASS)
def test_what_a_deny_rule_could_match_unseen_asks_even_in_bypass(command: str) -> None:
    decision = engine(deny=["bash(touch:*)"], mode="bypass").decide(bash(command))
    assert decision.action == "ask", (command, decision)
    assert decision.always_ask


def test_without_a_deny_rule_bypass_still_allows_those() -> None:
    policy = engine(mode="bypass")
    for command in ("cp /dev/null f", "python3 -c 'print(1)'", "$(echo true)"):
        assert policy.decide(bash(command)).action == "allow", command


def test_git_global_options_do_not_hide_the_subcommand() -> None:
    policy = engine(deny=["bash(git push:*)"], mode="bypass")
    for command in ("git -C . push", "git --no-pager -c x.y=1 push origin", "git -P push"):
        assert policy.decide(bash(command)).action == "deny", command
    for command in ("git -c alias.p='!git push' p", "git -c core.pager='sh -c x' log"):
        assert policy.decide(bash(command)).action == "ask", command
    assert policy.decide(bash("git -C . status")).action == "allow"


def test_unrelated_programs_are_not_caught_by_a_deny_rule() -> None:
    policy = engine(deny=["bash(touch:*)", "bash(rm:*)"], mode="bypass")
    unrelated = ("touchy f", "ls touch", "echo touch", "rmdir x", "nice -n 5 ls", "grep rm x")
    for command in (*unrelated, "command -v touch"):
        assert policy.decide(bash(command)).action == "allow", command
    assert policy.decide(bash("unlink f")).action == "ask"  # does what rm does


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c 'import os'",
        "node -e 'x'",
        "perl -E 'say 1'",
        'bash -c "$(cat cmd.txt)"',
    ],
)
def test_a_prefix_allow_rule_never_approves_inline_code(command: str) -> None:
    program = command.split()[0]
    policy = engine(allow=[f"bash({program}:*)"])
    decision = policy.decide(bash(command))
    assert decision.action == "ask", (command, decision)


def test_a_prefix_allow_rule_still_approves_scripts() -> None:
    policy = engine(allow=["bash(python3:*)", "bash(npm test:*)"])
    assert policy.decide(bash("python3 tools/gen.py --check")).action == "allow"
    assert policy.decide(bash("python3 -m pytest -c setup.cfg")).action == "allow"
    assert policy.decide(bash("npm test -- --watch=false")).action == "allow"


NOT_READS = [
    "printf -v 'a[$(touch M)]' 1",
    "printf -v x 1",
    "test -v 'a[$(touch M)]'",
    "[ -v 'a[$(touch M)]' ]",
    "test -R x",
    "git grep --open='touch M' -e x",
    "git grep --open-files-in-pager='touch M' -e x",
    "git grep -O'touch M' -e x",
    "git grep -nO'touch M' -e x",
    "git grep --textconv -e x",
    "sort -S 1K --compress-program=sh a",
    "sort --compress=sh a",
    "sort --out=FILE a",
    "sort --o FILE a",
    "sort -oFILE a",
    "sort -uo FILE a",
    "git branch --set-upstream-t=x",
    "git branch --set-up=x",
    "git branch --unset-up",
    "git branch --edit-desc",
    "git log --output=FILE",
    "git log --out=FILE",
    "git diff --ext-diff",
    "git diff --ext",
    "git show --textconv HEAD",
    "git cat-file --filters HEAD:a",
    "tree -R -H . x",
    "file -C -m magic",
    "date --se=2020-01-01",
    "rg --pre=sh x",
    "find . -fprint out",
]


@pytest.mark.parametrize("command", NOT_READS)
def test_code_running_and_writing_options_are_not_reads(command: str) -> None:
    classifier = ReadOnlyClassifier()
    assert not classifier.is_read(split_command(command)), command
    assert engine(mode="readOnly").decide(bash(command)).action == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "git log --oneline -n 3",
        "git diff --stat --no-ext-diff",
        "git log --no-textconv -p",
        "git grep -n -e x",
        "sort -u -k 2 a",
        "test -f a",
        "[ -d src ]",
        "printf '%s\\n' a",
        "git branch -a --list 'f*'",
        "rg --pre-glob '*.gz' x",
    ],
)
def test_plain_reads_stay_reads(command: str) -> None:
    assert ReadOnlyClassifier().is_read(split_command(command)), command


def test_a_prefix_allow_rule_does_not_cover_a_writing_option() -> None:
    policy = engine(allow=["bash(git log:*)", "bash(sort:*)"])
    assert policy.decide(bash("git log -p -n 2")).action == "allow"
    assert policy.decide(bash("git log --output=FILE")).action == "ask"
    assert policy.decide(bash("git log --out=FILE")).action == "ask"
    assert policy.decide(bash("sort --compress-program=sh a")).action == "ask"
    # Written into the rule by the user: that is what they allowed.
    assert engine(allow=["bash(sort -o out.txt:*)"]).decide(bash("sort -o out.txt a")).action == (
        "allow"
    )


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("echo ${a[i]}", "an array subscript that bash evaluates"),
        ("ls() { touch x; }; ls", "a shell function definition"),
        ("echo 'unbalanced", "the bash grammar cannot parse all of it"),
        ("diff <(ls) <(ls a)", "process substitution"),
    ],
)
def test_the_bash_grammar_marks_hidden_code_opaque(command: str, reason: str) -> None:
    assert reason in split_command(command).reasons
    assert engine().decide(bash(command)).action == "ask"


def test_the_bash_grammar_leaves_plain_commands_alone() -> None:
    for command in ("ls -la", "echo ${a[0]} $HOME", "git log --oneline | head", "echo a\\ b"):
        assert not split_command(command).opaque, command
    # A subscript bash evaluates makes the line opaque: not a read.
    assert not ReadOnlyClassifier().is_read(split_command("echo ${a[i]}"))
