"""Deny rules that missed commands hidden in options, builtins and patterns (issue 41
item 6): `script -qc 'touch X'`, `/usr/bin/tou[c]h X`, `trap 'touch X' EXIT`, an alias
defined inside `bash -c`, and their siblings. Each is unfolded (the rule then denies it) or
opaque (it asks, even in bypass mode); test_policy_shell_holes_e2e.py runs the issue's
commands through the server."""

from __future__ import annotations

import pytest

from lsp_server.policy.commands.wrappers import command_forms, view_command
from lsp_server.policy.engine import CallFacts, PolicyEngine, RuleSet
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.policy.rules import parse_rules
from lsp_server.shellparse.shell_words import split_command

TOUCH_HIDDEN = [
    "script -qc 'touch X'",
    "script -q -c 'touch X' /dev/null",
    "script --command 'touch X'",
    "script --command='touch X'",
    "script --comm='touch X'",
    "script -c'touch X'",
    "/usr/bin/tou[c]h X",
    "/usr/bin/touc? X",
    "tou[c]h X",
    "nice /usr/bin/tou* X",
    "trap 'touch X' EXIT",
    "trap -- 'touch X' EXIT INT",
    "bash -c 'shopt -s expand_aliases; alias t=touch; t X'",
    "sh -c 'alias t=\"touch X\"; t'",
    "flock -c 'touch X' lockfile",
    "flock lockfile -c 'touch X'",
    "flock -nc 'touch X' lockfile",
    "flock --command='touch X' lockfile",
    "su -c 'touch X'",
    "su -lc 'touch X'",
    "su --command='touch X' root",
    "runuser -u root -- touch X",
    "runuser root -c 'touch X'",
    "watch touch X",
    "watch -d touch X",
    "watch -n 1 -d touch X",
    "parallel touch ::: X",
    "echo X | parallel touch",
    "env -S 'touch X'",
    "env -vS 'touch X'",
    "env -u A -S 'touch X'",
    "env -uA -vS'touch X'",
    "env --split-string='touch X'",
    "busybox touch X",
    "toybox touch X",
    "exec -a name touch X",
    "coproc touch X",
    "coproc NAME { touch X; }",
    "builtin touch X",
    "command -p touch X",
    "pkexec touch X",
    "chrt -f 10 touch X",
    "unshare -r touch X",
    "enable -f ./lib.so touch",
    "fc -e touch",
    "hash -p /usr/bin/touch t; t X",
    "PROMPT_COMMAND='touch X' bash -i",
    "PS4='$(touch X)' bash -xc true",
    "env PS4='$(touch X)' bash -xc true",
    "export PS4='$(touch X)'; set -x; true",
    "env 'BASH_FUNC_ls%%=() { touch X; }' bash -c ls",
    "BASH_ENV=./x.sh bash -c true",
    "PATH=.:/usr/bin ls",
    "echo 'touch X' | xargs -I{} sh -c {}",
    "sudo -s 'touch X'",
    "sudo -u root -i 'touch X'",
    "sh <<< 'touch X'",
    "compgen -C 'touch X' a",
    "mapfile -t -C 'touch X' -c 1 lines < in.txt",
    "readarray -C'touch X' lines < in.txt",
    "expect -c 'spawn touch X'",
    "nix-shell --run 'touch X'",
    "screen -dm touch X",
    "screen -S s -X stuff 'touch X\n'",
    "tmux new-session -d 'touch X'",
    "gdb -batch -ex '!touch X'",
    "vim -c '!touch X' -c q",
    "less +'!touch X' f",
    "sqlite3 :memory: '.system touch X'",
    "valgrind -q touch X",
    "fakeroot touch X",
    "faketime '2020-01-01' touch X",
    "sg users 'touch X'",
]
# A program toolhost does not know, given the denied program's name: it asks.
GIVEN_THE_NAME = ["mywrapper --flag touch X", "make touch", "perf stat touch X"]


def engine(deny: tuple[str, ...], mode: str) -> PolicyEngine:
    problems: list[str] = []
    rules = RuleSet(deny=tuple(parse_rules(list(deny), problems, "deny")))
    assert problems == []
    return PolicyEngine(rules, mode, ReadOnlyClassifier())  # type: ignore[arg-type]


@pytest.mark.parametrize("command", [*TOUCH_HIDDEN, *GIVEN_THE_NAME])
def test_a_deny_rule_refuses_or_asks_for_hidden_commands(command: str) -> None:
    facts = CallFacts(tool="bash", kind="shell", read_only=False, command=command)
    decision = engine(("bash(touch:*)",), "bypass").decide(facts)
    assert decision.action in ("deny", "ask"), (command, decision)
    if decision.action == "ask":
        assert decision.always_ask, (command, decision)


@pytest.mark.parametrize("command", TOUCH_HIDDEN)
def test_the_hidden_command_is_unfolded_or_opaque(command: str) -> None:
    view = view_command(split_command(command), command)
    programs = {
        form[0].rsplit("/", 1)[-1]
        for segment in view.segments
        if segment.words
        for form in command_forms(segment.words)
    }
    assert view.opaque or "touch" in programs, (command, view)


def test_plain_commands_stay_allowed_next_to_the_deny_rule() -> None:
    for command in (
        "ls -la",
        "echo touch",
        "git status",
        "cat README.md",
        "trap - EXIT",
        "grep -n touch README.md",
        "which touch",
    ):
        facts = CallFacts(tool="bash", kind="shell", read_only=False, command=command)
        assert engine(("bash(touch:*)",), "bypass").decide(facts).action == "allow", command


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("bash(sed -n:*)", "sed -n 'e touch X' in.txt"),
        ("bash(sed -n:*)", "sed -n '1w .toolhost.toml' in.txt"),
        ("bash(sed -n:*)", "sed -ne'w out' p"),
        ("bash(sed:*)", "sed 's/a/b/e' in.txt"),
        ("bash(awk:*)", "awk '{print > \"out\"}' in.txt"),
        ("bash(awk:*)", "awk '{print | \"sh\"}' in.txt"),
    ],
)
def test_a_prefix_allow_rule_does_not_cover_scripts_that_run_or_write(
    rule: str, command: str
) -> None:
    problems: list[str] = []
    rules = RuleSet(allow=tuple(parse_rules([rule], problems, "allow")))
    policy = PolicyEngine(rules, "default", ReadOnlyClassifier())  # type: ignore[arg-type]
    facts = CallFacts(tool="bash", kind="shell", read_only=False, command=command)
    assert policy.decide(facts).action == "ask", (rule, command)
    plain = CallFacts(tool="bash", kind="shell", read_only=False, command="sed -n 's/a/b/p' f")
    assert (
        PolicyEngine(
            RuleSet(allow=tuple(parse_rules(["bash(sed -n:*)"], problems, "allow"))),
            "default",  # type: ignore[arg-type]
            ReadOnlyClassifier(),
        )
        .decide(plain)
        .action
        == "allow"
    )
