"""The classifier against the tricky command corpus (issue 27), and the bash grammar's
reading of words: none of the corpus is a plain read, in readOnly mode every one is
refused, with no sandbox every one asks; ordinary reads in their common shapes stay reads.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lsp_server.policy.engine import CallFacts, PolicyEngine, RuleSet
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.shellparse.shell_words import split_command
from tests.policy.tricky_commands import TRICKY_COMMANDS, Tricky

READS = [
    "ls -la",
    "ls -la --color=auto src | wc -l",
    "cat 'a b.txt' \"c d.txt\"",
    "head -5 a.txt && tail -n +3 a.txt",
    "git status --short",
    "git log --oneline -n 5",
    "git log -5 --stat --format=%H",
    "git diff HEAD~1 -- src",
    "git show --name-only HEAD",
    "git shortlog -sn HEAD",
    "git rev-list --count HEAD",
    "git stash list",
    "git stash show -p",
    "git reflog",
    "git reflog show --oneline",
    "git config --get user.name",
    "git config --list",
    "git config get user.name",
    "git branch -a",
    "git branch --list 'feat*'",
    "git tag -l",
    "git remote -v",
    "git -C sub status",
    "git grep -n foo",
    "grep -rn foo src 2>/dev/null",
    "rg -n -g '*.py' 'a|b' src",
    "find . -name '*.py' -type f",
    "find -- . -name x -print",
    "find . \\( -name a -o -name b \\) -print0",
    "sed -n '1,20p' a.txt",
    "sed 's/a/b/g' a.txt",
    "sort -u -k 2 -t, names.txt | uniq -c",
    "date +%F",
    "echo 'a b' \"c\" d\\ e",
    "printf '%s\\n' x",
    "wc -l a b c && pwd",
    "du -sh . ; df -h",
    "tree -L 2",
    "jq .name package.json",
]


@pytest.mark.parametrize("command", READS)
def test_ordinary_reads_stay_reads(command: str) -> None:
    classifier = ReadOnlyClassifier()
    assert classifier.concern(split_command(command)) is None


def _facts(command: str) -> CallFacts:
    return CallFacts(tool="bash", kind="shell", read_only=False, command=command)


@pytest.mark.parametrize("entry", TRICKY_COMMANDS, ids=lambda e: e.command[:60])
def test_no_tricky_command_is_a_plain_read(entry: Tricky) -> None:
    read_only = PolicyEngine(RuleSet(), "readOnly", ReadOnlyClassifier())
    facts = _facts(entry.command)
    assert not read_only.is_plain_read(facts), entry.why
    assert read_only.decide(facts).action == "deny"
    # No sandbox, default mode: it asks (and a denied approval stops it).
    unsandboxed = PolicyEngine(RuleSet(), "default", ReadOnlyClassifier())
    assert unsandboxed.decide(_facts(entry.command)).action == "ask"


def test_the_corpus_is_large_and_varied() -> None:
    assert len(TRICKY_COMMANDS) >= 60
    assert len({e.command for e in TRICKY_COMMANDS}) == len(TRICKY_COMMANDS)
    categories = {e.category for e in TRICKY_COMMANDS}
    assert {"quoting", "abbreviation", "double-dash", "expansion", "git-config"} <= categories
    assert {"git-remote", "find", "sort", "rg", "git-option"} <= categories


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("find . $'-delete'", ("find", ".", "-delete")),
        ("find . $'\\x2ddelete' $'\\055x' $'\\u002dy'", ("find", ".", "-delete", "-x", "-y")),
        ('find . $"-delete"', ("find", ".", "-delete")),
        ("s''ed -i x", ("sed", "-i", "x")),
        ("\\rm a\\ b", ("rm", "a b")),
        ('echo "a\\$b\\\\c\\d"', ("echo", "a$b\\c\\d")),
        ("X=1 ls >out x", ("X=1", "ls", "x")),
        ("echo $'a\\'b' $'\\cA'", ("echo", "a'b", "\x01")),
    ],
)
def test_words_are_what_bash_passes(command: str, words: tuple[str, ...]) -> None:
    parsed = split_command(command)
    assert not parsed.opaque, parsed.reasons
    assert parsed.segments[0].words == words


@pytest.mark.parametrize(
    "command",
    [
        "echo $(( _ ))",
        "echo $[ 1 ]",
        "echo ${x@P}",
        "echo ${a[i]}",
        "echo ${x:a:1}",
        "echo ${x:-$(id)}",
        "[[ $y -eq 0 ]]",
        "((x++))",
        "a[$i]=1 ls",
        "f() { ls; }",
        "cat <<EOF\nx\nEOF",
        "ls 'unbalanced",
    ],
)
def test_what_bash_evaluates_is_opaque(command: str) -> None:
    assert split_command(command).opaque


def test_plain_expansions_make_a_word_opaque_not_the_line() -> None:
    parsed = split_command('cat "$HOME/x" ${y} $1')
    assert not parsed.opaque
    assert parsed.segments[0].expanding == frozenset({1, 2, 3})
    assert ReadOnlyClassifier().concern(parsed) is not None  # an opaque word: not a read


def test_non_ascii_words_keep_their_text() -> None:
    parsed = split_command("cat 'naïve 🎉.txt' {\U000fce39")
    assert parsed.segments[0].words == ("cat", "naïve 🎉.txt", "{\U000fce39")


def test_an_ext_remote_makes_remote_commands_a_concern(tmp_path: Path) -> None:
    """`ext::<command>` remotes run the command where protocol.ext.allow lets them: the
    repository's own config choosing one is a concern for what talks to remotes."""
    from lsp_server.policy.commands.git_guard import GitConfigGuard

    def config_concern(cwd: Path, args: list[str]) -> str | None:
        return GitConfigGuard().concern(cwd, args)

    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)

    def git_config(*args: str) -> None:
        subprocess.run(["git", "config", *args], cwd=tmp_path, check=True)

    git_config("remote.origin.url", "https://example.invalid/repo.git")
    assert config_concern(tmp_path, ["ls-remote", "origin"]) is None
    git_config("remote.evil.url", "ext::sh -c touch% PWNED")
    assert config_concern(tmp_path, ["ls-remote", "evil"]) is not None
    assert config_concern(tmp_path, ["log"]) is None  # reads do not talk to remotes
    git_config("--unset", "remote.evil.url")
    git_config("protocol.ext.allow", "always")
    assert config_concern(tmp_path, ["remote", "show", "origin"]) is not None
    git_config("protocol.ext.allow", "never")
    assert config_concern(tmp_path, ["remote", "show", "origin"]) is None


@pytest.mark.parametrize(
    ("command", "read"),
    [
        ("git log --output=f", False),
        ("git log --out=f", False),  # an abbreviation is not a read
        ("git log --stat", True),  # an exact name is that option
        ("sort --reverse a", True),
        ("sort --rev a", False),
        ("ls -la", True),
        ("ls -laZ", True),
        ("ls -la --dired", False),  # not in ls's allow list
        ("head -n5 a", True),
        ("head -n", False),  # a missing value
        ("git config --global --get user.name", True),
        ("git config --get user.name extra more", False),
        ("git stash", False),
        ("git reflog expire --all", False),
    ],
)
def test_options_are_judged_by_allow_list(command: str, read: bool) -> None:
    assert (ReadOnlyClassifier().concern(split_command(command)) is None) == read
