"""Golden outlines: every definition of each fixture with kind, parent, lines, signature."""

from __future__ import annotations

import pytest

from lsp_server.codeintel import languages
from lsp_server.codeintel.outline import outline, symbol_rows
from tests.codeintel.conftest import FIXTURE_FILES, FIXTURES, GOLDEN, check_golden


def render(name: str) -> str:
    spec = languages.language_for_path(name)
    assert spec is not None
    source = (FIXTURES / name).read_bytes()
    lines = [
        f"{s.start_line}-{s.end_line}: {s.kind} {s.qualified_name} — {s.signature}"
        for s in outline(spec.name, source)
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_outline_matches_golden(name: str) -> None:
    check_golden(GOLDEN / "outline" / f"{name}.txt", render(name))


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_fixture_parses_without_errors(name: str) -> None:
    spec = languages.language_for_path(name)
    assert spec is not None
    tree = languages.parse(spec.name, (FIXTURES / name).read_bytes())
    assert not tree.root_node.has_error


def test_every_language_has_a_fixture_and_a_query() -> None:
    covered = {languages.language_for_path(name) for name in FIXTURE_FILES}
    for spec in languages.LANGUAGES:
        assert spec in covered, spec.name
        assert languages.tags_query(spec.name).pattern_count > 0


def test_non_ascii_names_and_lines() -> None:
    source = (FIXTURES / "sample.py").read_bytes()
    by_name = {s.name: s for s in outline("python", source)}
    assert by_name["计算"].start_line == 42
    assert by_name["计算"].signature == "def 计算(数字):"
    assert by_name["名字"].kind == "var"
    # The emoji string inside `nested` does not shift the lines that follow.
    assert by_name["nested"].parent == "Shape.Inner.deep"
    assert (by_name["fetch"].start_line, by_name["fetch"].end_line) == (46, 47)


def test_kinds_cover_the_normalised_set() -> None:
    kinds = set()
    for name in FIXTURE_FILES:
        spec = languages.language_for_path(name)
        assert spec is not None
        kinds |= {s.kind for s in outline(spec.name, (FIXTURES / name).read_bytes())}
    assert kinds == {
        "function", "method", "class", "struct", "interface", "trait",
        "enum", "type", "const", "var", "module", "field",
    }  # fmt: skip


def test_bash_scanner_never_sees_non_ascii_bytes() -> None:
    """tree-sitter-bash's scanner can crash the process on some non-ASCII text (`{` then
    U+FCE39): bash files are parsed from an ASCII stand-in, names read from the original."""
    source = 'café() {\n  echo "{\U000fce39"\n}\n'.encode()
    tree = languages.parse("bash", source)
    assert tree.root_node.text is not None and tree.root_node.text.isascii()
    assert len(tree.root_node.text) == len(source)
    symbols = outline("bash", source)
    assert [(s.name, s.signature) for s in symbols] == [("café", "café() {")]


def test_symbol_rows_are_the_outline() -> None:
    """The index's rows (built without Symbol objects) say what `outline` says."""
    for name in FIXTURE_FILES:
        spec = languages.language_for_path(name)
        assert spec is not None
        source = (FIXTURES / name).read_bytes()
        rows = [
            (s.name, s.kind, s.parent, s.start_line, s.end_line, s.start_byte, s.end_byte,
             s.signature, s.language)
            for s in outline(spec.name, source)
        ]  # fmt: skip
        assert symbol_rows(spec.name, source) == rows, name
