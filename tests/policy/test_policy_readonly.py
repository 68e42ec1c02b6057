"""The read-only shell command classifier."""

from __future__ import annotations

import pytest

from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.shellparse.shell_words import split_command

READS = [
    "ls -la",
    "cat README.md | head -n 20",
    "git status",
    "git diff HEAD~1 -- src",
    "git log --oneline -n 5",
    "git branch -a",
    "git -C sub status",
    "grep -rn foo src 2>/dev/null",
    "rg -n 'a|b' src",
    "find . -name '*.py' -type f",
    "sed -n '1,20p' a.txt",
    "sed 's/a/b/g' a.txt",
    "wc -l a b c && pwd",
    "sort -u names.txt",
]
WRITES = [
    "ls > out.txt",
    "cat a >> b",
    "sed -i 's/a/b/' x",
    "sed -ni 's/a/b/p' x",
    "sed 's/a/b/w out' x",
    "sed -e '1e rm -rf x' f",
    "find . -delete",
    "find . -name x -exec rm {} ;",
    "git branch -D main",
    "git branch new-feature",
    "git -c core.pager=sh status",
    "git push",
    "git diff --output=x",
    "git stash",
    "git tag v1",
    "sort -o out in",
    "rg --pre ./script x",
    "./ls",
    "PAGER=evil git log",
    "$X status",
    "echo $(rm -rf x)",
    "make",
    "ls | sh",
    "tee out.txt",
]


@pytest.mark.parametrize("command", READS)
def test_plain_reads(command: str) -> None:
    assert ReadOnlyClassifier().is_read(split_command(command))


@pytest.mark.parametrize("command", WRITES)
def test_writers_and_unknowns(command: str) -> None:
    assert not ReadOnlyClassifier().is_read(split_command(command))


def test_configured_extra_reads() -> None:
    problems: list[str] = []
    classifier = ReadOnlyClassifier(["cargo tree:*", "make -n", "bad && spec"], problems)
    assert classifier.is_read(split_command("cargo tree -e normal"))
    assert classifier.is_read(split_command("make -n"))
    assert not classifier.is_read(split_command("make"))
    assert not classifier.is_read(split_command("make -n > out"))
    assert len(problems) == 1 and "bad && spec" in problems[0]
