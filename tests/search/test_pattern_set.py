"""The secret deny list as one regex (search/pattern_set.py) answers exactly what
`GitIgnoreSpec.match_file` answers, the test grep's secret filter used before."""

from __future__ import annotations

import re

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_server.fs.workspace import SECRET_PATTERNS
from lsp_server.search.pattern_set import (
    PathTest,
    any_match,
    any_pattern,
    join_alternatives,
    required_text,
)

# Names near the deny list's patterns, so that the generated paths hit and miss them.
SEGMENTS = [
    ".env", ".env.local", "env", "a.pem", "pem", "x.key", "key", "id_rsa", "id_rsa.pub",
    "id_ed25519_sk", ".ssh", "ssh", ".gnupg", ".netrc", ".git-credentials", ".aws",
    "credentials", ".npmrc", ".pypirc", "src", "a", "b.py", "config.env.example", "café",
    "\udce9", "odd\nname", "[x]", "*", "dir.pem", ".key", "p12.p12", "x.pfx",
]  # fmt: skip
USER_LISTS = [
    (*SECRET_PATTERNS, "*.secret", "private/", "/top.txt", "**/deep/*.cfg", "a?c", "[ab].py"),
    ("*.py", "!b.py"),  # a negation: match_file itself is used
    ("", "# comment", "*.key"),
]
paths = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=5).map("/".join)


@given(path=paths)
@settings(max_examples=400, deadline=None)
def test_the_deny_list_as_one_regex_equals_match_file(path: str) -> None:
    spec = pathspec.GitIgnoreSpec.from_lines(SECRET_PATTERNS)
    assert any_match(spec)(path) == spec.match_file(path)


@given(path=paths, patterns=st.sampled_from(USER_LISTS))
@settings(max_examples=300, deadline=None)
def test_user_pattern_lists_equal_match_file(path: str, patterns: tuple[str, ...]) -> None:
    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    assert any_match(spec)(path) == spec.match_file(path)


def test_the_deny_list_takes_the_one_regex_path() -> None:
    spec = pathspec.GitIgnoreSpec.from_lines(SECRET_PATTERNS)
    assert any_match(spec) != spec.match_file
    negated = pathspec.GitIgnoreSpec.from_lines(["*.py", "!b.py"])
    assert any_match(negated) == negated.match_file


def test_patterns_at_any_depth_share_one_walk_through_the_folders() -> None:
    # pathspec starts the regex of a pattern without a slash with "^(?:.+/)?".
    alternatives = ["^(?:.+/)?\\.env$", "^(?:.+/)?[^/]*\\.pem$", "^\\.aws/credentials$"]
    joined = join_alternatives(alternatives)
    assert joined.count("^(?:.+/)?") == 1
    for path in ("src/.env", ".env", "a/b/c.pem", ".aws/credentials", "x/.aws/credentials"):
        expected = any(re.search(a, path) for a in alternatives)
        assert bool(re.search(joined, path)) == expected, path


@given(path=paths, patterns=st.sampled_from([SECRET_PATTERNS, *USER_LISTS]))
@settings(max_examples=400, deadline=None)
def test_every_path_a_list_matches_holds_its_required_text(
    path: str, patterns: tuple[str, ...]
) -> None:
    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    hint = required_text(spec)
    if hint is not None and spec.match_file(path):
        assert any(text in path for text in hint), (path, hint)
    visible = required_text(spec, visible=True)
    hidden = any(part.startswith(".") for part in path.split("/"))
    if visible is not None and not hidden and spec.match_file(path):
        assert any(text in path for text in visible), (path, visible)


def test_the_required_text_of_the_deny_list_and_of_lists_without_one() -> None:
    deny = PathTest.of(SECRET_PATTERNS)
    assert deny.hint is not None and ".env." not in deny.hint  # .env covers it
    assert deny.visible_hint is not None and ".env" not in deny.visible_hint
    assert not deny.may_match("src/a.go\0b/.env", hidden=False)  # the caller's word
    assert deny.may_match("src/a.go\0b/.env") and deny.may_match("k/id_rsa.go", hidden=False)
    assert deny.may_match("a/b/server.pem") and deny.may_match("x/.ssh/config")
    assert not deny.may_match("src/net/http/server.go\0src/a.go")
    for lines in (["*"], ["*.py", "!b.py"], ["[ab].py"], ["\\#x"], ["**/"]):
        assert required_text(pathspec.GitIgnoreSpec.from_lines(lines)) is None, lines
    assert deny.match("deep/id_rsa") and not deny.match("deep/rsa_id")


@given(path=paths, patterns=st.sampled_from([*USER_LISTS, ("*.py", "!b.py", "!keep/", "build/")]))
@settings(max_examples=300, deadline=None)
def test_a_path_any_line_matches_holds_the_lines_required_text(
    path: str, patterns: tuple[str, ...]
) -> None:
    """The hint of "some line, a `!` line or not, matches" (ignore files in ls's pass)."""
    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    hint = required_text(spec, any_line=True)
    if hint is not None and any_pattern(spec)(path):
        assert any(text in path for text in hint), (path, hint)
