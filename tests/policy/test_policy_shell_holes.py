"""Shell reads that wrote or leaked (issue 41 item 6).

With no sandbox the classifier decides alone: `uniq IN OUT` wrote OUT, `sed -ne 'w f' p`
wrote f, `date -f .env` printed it; and a hard link, xargs or a pattern only bash reads
right hid a secret from the check of what a read reads (which also holds in the sandbox:
it does not stop reads). test_policy_shell_holes_e2e.py drives the issue's own commands
through the server; test_policy_hidden_commands.py has the deny rules that missed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_server.fs.workspace import Workspace
from lsp_server.policy.commands.command_paths import Places
from lsp_server.policy.commands.wrappers import view_command
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.shellparse.shell_words import split_command


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "in.txt").write_text("b\na\na\n")
    (root / "p").write_text("p\n")
    (root / ".env").write_text("KEY=sk-test-123\n")
    (root / ".git" / "hooks").mkdir(parents=True)
    return root


def classifier(root: Path) -> ReadOnlyClassifier:
    workspace = Workspace([root])
    places = Places(roots=(root,), is_secret=workspace.is_secret)
    return ReadOnlyClassifier(places=places)


def concern(command: str, root: Path) -> str | None:
    return classifier(root).concern(split_command(command), root)


# -- every plain-read program: no output operand, no writing option --------------------------
NOT_READS = [
    "uniq in.txt .toolhost.toml",
    "uniq in.txt .git/hooks/pre-commit",
    "uniq -c in.txt out.txt",
    "uniq in.txt -- out.txt",
    "uniq -- in.txt out.txt",
    # sed scripts given bundled with -e: the script is the value, not the first file
    "sed -ne 'w .toolhost.toml' p",
    "sed -e'w out' p",
    "sed -nEe 'w out' p",
    "sed -ne 'e touch X' p",
    "sed -n --expression='w out' p",
    "sed -n --expression 's/a/b/w out' p",
    # secrets printed in error messages, module reads, objects named on stdin
    "date -f .env",
    "date --file=.env",
    "jq -n 'import \"data\" as $d; $d'",
    "jq -n 'include \"m\"; .'",
    "file -f list.txt",
    "ps e",
    "ps axeww",
    "file --files-from list.txt",
    "git cat-file --batch",
    "git cat-file --batch-all-objects --batch",
    # names from the input: no word shows which files are read
    "echo .env | xargs cat",
    "xargs cat <<< .env",
    "xargs -a names.txt cat",
    "find . -name '*.py' | xargs head",
    "parallel cat ::: .env",
    # patterns that bash reads differently from Python's glob, and glob options
    "cat .[^x]nv",
    "cat .[[:alpha:]]nv",
    "cat .[[=e=]]nv",
    "shopt -s dotglob; cat *",
    "GLOBIGNORE=x; cat *",
    "bash -O dotglob -c 'cat *'",
    # tildes for folders: ~+ is the current one, ~- and ~N only known when it runs
    "cat ~+/.env",
    "cat ~-/.env",
    "cat ~1/x",
    # a file attached to its option, brace ranges
    "date -f.env",
    "date -uf.env",
    "grep -if.env in.txt",
    "git grep -nf.env",
    "cat .{d..f}nv",
    "cat .{a..z}{a..z}v",
]

READS = [
    "uniq in.txt",
    "uniq -c -i in.txt",
    "sort -u in.txt | uniq -c",
    "sed -n 1p in.txt",
    "sed -ne 1p in.txt",
    "sed -e 's/a/b/g' -e 2d in.txt",
    "sed --expression=5p in.txt",
    "date +%F",
    "date -u +%s",
    "jq -n '.a'",
    "file src/a.py",
    "git cat-file --batch-check",
    "cat s[r]c/a.py",
    "cat src/[!b].py",
    "cat *",
    "ps aux",
    "ps -ef",
    "cat ~+/in.txt",
    "cat i{m..o}.txt",
    "cut -d/ -f2 in.txt",
    "head -n5 in.txt",
]


@pytest.mark.parametrize("command", NOT_READS)
def test_reads_that_write_or_hide_what_they_read_are_not_plain_reads(
    root: Path, command: str
) -> None:
    assert concern(command, root) is not None, command


@pytest.mark.parametrize("command", READS)
def test_ordinary_reads_stay_plain_reads(root: Path, command: str) -> None:
    assert concern(command, root) is None, command


def test_a_bash_negated_bracket_is_expanded_as_bash_does(root: Path) -> None:
    # `[^x]` is bash's `[!x]`: the pattern names .env, which Python's glob missed.
    assert "secret" in (concern("cat .[^x]nv", root) or "")
    assert "cannot expand" in (concern("cat .[[:alpha:]]nv", root) or "")


# -- a hard link is its file under another name ------------------------------------------------
def test_a_hard_link_to_a_secret_is_that_secret(root: Path) -> None:
    os.link(root / ".env", root / "src" / "notes.txt")
    for command in (
        "cat src/notes.txt",
        "head -1 src/notes.txt",
        "rg KEY src/notes.txt",
        "grep KEY src/notes.txt",
        "cat src/*.txt",
        "grep -r KEY src",
        "rg KEY src",
        "rg KEY",
        "wc -c < src/notes.txt",
    ):
        found = concern(command, root)
        assert found is not None, command
        if command.startswith(("cat src/n", "rg KEY src/")):
            assert "hard link" in found and ".env" in found, (command, found)
    assert concern("cat src/a.py", root) is None


def test_a_hard_link_from_outside_the_workspace_asks(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "id_key"
    outside.write_text("PRIVATE\n")
    os.link(outside, root / "src" / "key.txt")
    assert "names outside" in (concern("cat src/key.txt", root) or "")
    assert concern("grep -r PRIVATE src", root) is not None
    # Two names, both inside and neither a secret: a plain read.
    os.link(root / "src" / "a.py", root / "src" / "b.py")
    assert concern("cat src/b.py", root) is None


def test_what_bash_hides_from_the_words_asks_even_in_the_sandbox(root: Path) -> None:
    # The sandbox stops writes, not reads: these are place concerns, asked about there too.
    check = classifier(root)
    for command in (
        "echo .env | xargs cat",
        "xargs cat <<< .env",
        "shopt -s dotglob; cat *",
        "bash -O dotglob -c 'cat *'",
        "cat .[^x]nv",
        "bash <<< 'cat .env'",
        "cat <(cat .env)",
        "cat <<EOF\n$(cat .env)\nEOF",
        "cat ~+/.env",
    ):
        segments = view_command(split_command(command), command).segments
        found = [check.segment_place_concern(s, root) for s in segments]
        assert any(found), command
    for harmless in ("echo a b | xargs", "echo a | xargs -n 1 echo"):
        assert check.segment_place_concern(split_command(harmless).segments[1], root) is None


def test_a_pattern_with_more_names_than_are_checked_asks(root: Path) -> None:
    many = root / "many"
    many.mkdir()
    for index in range(300):
        (many / f"f{index:03}.txt").write_text("x\n")
    assert "too many" in (concern("cat many/*", root) or "")
    assert "too many" in (concern("cat many/f{000..299}.txt", root) or "")
    assert concern("cat many/f00*", root) is None
