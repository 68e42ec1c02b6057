"""The language table: one row of data per language, no class hierarchy.

A row says which files belong to the language, which grammar wheel parses them, which
tags query finds its definitions (queries/<name>.scm), and how a definition's
surroundings go with it when it is deleted.

Query conventions (our own .scm files, extended from each grammar's tags.scm):
- `@definition.<kind>` marks a definition node, `<kind>` one of kinds.KINDS;
- `@name` is its name; an optional `@parent` names a parent outside the node
  (a Go receiver type, the `Foo` of C++ `void Foo::bar()`);
- `@scope` marks a container that is not a symbol but names its members' parent
  (a Rust `impl` block), with `@name` as that name.
When several patterns capture the same node, the earliest pattern wins.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable
from importlib import resources
from pathlib import PurePath

import attrs
import tree_sitter


@attrs.frozen
class LanguageSpec:
    name: str
    """Stable id, also the query file name."""
    extensions: tuple[str, ...]
    """Lower-case file suffixes, with the dot."""
    grammar_module: str
    """The grammar wheel's module (`tree_sitter_python`)."""
    grammar_function: str = "language"
    """The function of that module returning the language pointer."""
    wrappers: frozenset[str] = frozenset()
    """Node types around a definition that go with it when deleted (`export_statement`,
    `decorated_definition`): climbed while the wrapper holds nothing else of that type."""
    attached: frozenset[str] = frozenset()
    """Preceding sibling node types that belong to the next definition (Rust attributes)."""
    comment_prefixes: tuple[str, ...] = ("//", "/*")
    """How a trailing comment starts (a comment after a definition may go with it)."""
    top_level_blank_lines: int | None = None
    """Blank lines around top-level definitions when the style fixes it (PEP 8: 2)."""
    aliases: tuple[str, ...] = ()
    """Other names users give the language (`py`, `ts`)."""
    non_empty_blocks: frozenset[str] = frozenset()
    """Body node types that may not be left empty (a Python block: the grammar accepts
    `class A:` with nothing after it, Python does not)."""
    query: str | None = None
    """The tags query file's name when another language's fits (TSX shares TypeScript's);
    by default the language's own name."""
    ascii_stand_in: bool = False
    """Parse with every non-ASCII byte replaced by `a` (same offsets): for a grammar whose
    native scanner crashes the process on some non-ASCII text, where such characters are
    plain word characters anyway (bash: policy/commands/bash_tree.py has the details).
    Names and signatures are read from the original bytes."""


_C_LIKE_WRAPPERS = frozenset({"declaration", "template_declaration"})
_TS_WRAPPERS = frozenset(
    {
        "export_statement",
        "lexical_declaration",
        "variable_declaration",
        "ambient_declaration",
        "expression_statement",
    }
)

LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        name="python",
        extensions=(".py", ".pyi", ".pyw"),
        grammar_module="tree_sitter_python",
        wrappers=frozenset({"decorated_definition", "expression_statement"}),
        comment_prefixes=("#",),
        top_level_blank_lines=2,
        aliases=("py",),
        non_empty_blocks=frozenset({"block"}),
    ),
    LanguageSpec(
        name="javascript",
        extensions=(".js", ".mjs", ".cjs", ".jsx"),
        grammar_module="tree_sitter_javascript",
        wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration"}),
        attached=frozenset({"decorator"}),
        aliases=("js", "jsx"),
    ),
    LanguageSpec(
        name="typescript",
        extensions=(".ts", ".mts", ".cts"),
        grammar_module="tree_sitter_typescript",
        grammar_function="language_typescript",
        wrappers=_TS_WRAPPERS,
        attached=frozenset({"decorator"}),
        aliases=("ts",),
    ),
    LanguageSpec(
        name="tsx",
        query="typescript",
        extensions=(".tsx",),
        grammar_module="tree_sitter_typescript",
        grammar_function="language_tsx",
        wrappers=_TS_WRAPPERS,
        attached=frozenset({"decorator"}),
    ),
    LanguageSpec(
        name="go",
        extensions=(".go",),
        grammar_module="tree_sitter_go",
        wrappers=frozenset({"type_declaration", "const_declaration", "var_declaration"}),
        aliases=("golang",),
    ),
    LanguageSpec(
        name="rust",
        extensions=(".rs",),
        grammar_module="tree_sitter_rust",
        attached=frozenset({"attribute_item"}),
        aliases=("rs",),
    ),
    LanguageSpec(
        name="java",
        extensions=(".java",),
        grammar_module="tree_sitter_java",
    ),
    LanguageSpec(
        name="c",
        extensions=(".c", ".h"),
        grammar_module="tree_sitter_c",
        wrappers=_C_LIKE_WRAPPERS,
    ),
    LanguageSpec(
        name="cpp",
        extensions=(".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp"),
        grammar_module="tree_sitter_cpp",
        wrappers=_C_LIKE_WRAPPERS,
        aliases=("c++", "cxx"),
    ),
    LanguageSpec(
        name="csharp",
        extensions=(".cs",),
        grammar_module="tree_sitter_c_sharp",
        aliases=("c#", "cs"),
    ),
    LanguageSpec(
        name="ruby",
        extensions=(".rb", ".rake", ".gemspec"),
        grammar_module="tree_sitter_ruby",
        comment_prefixes=("#",),
        aliases=("rb",),
    ),
    LanguageSpec(
        name="bash",
        extensions=(".sh", ".bash"),
        grammar_module="tree_sitter_bash",
        comment_prefixes=("#",),
        aliases=("sh", "shell"),
        ascii_stand_in=True,
    ),
)

_BY_NAME = {spec.name: spec for spec in LANGUAGES}
_BY_EXTENSION = {ext: spec for spec in LANGUAGES for ext in spec.extensions}


def language_for_path(path: str | PurePath) -> LanguageSpec | None:
    """The row for a file name, by its suffix; None when no grammar covers it."""
    suffix = PurePath(path).suffix.lower()
    return _BY_EXTENSION.get(suffix)


def language_named(name: str) -> LanguageSpec | None:
    key = name.strip().lower()
    if key in _BY_NAME:
        return _BY_NAME[key]
    return next((spec for spec in LANGUAGES if key in spec.aliases), None)


def all_extensions() -> Iterable[str]:
    return _BY_EXTENSION.keys()


# Grammars, parsers and compiled queries are immutable once built, so each process
# (the server and every index worker) builds them once per language.
@functools.cache
def grammar(name: str) -> tree_sitter.Language:
    spec = _BY_NAME[name]
    module = importlib.import_module(spec.grammar_module)
    return tree_sitter.Language(getattr(module, spec.grammar_function)())


@functools.cache
def tags_query(name: str) -> tree_sitter.Query:
    query_name = _BY_NAME[name].query or name
    text = resources.files("lsp_server.codeintel").joinpath("queries", f"{query_name}.scm")
    return tree_sitter.Query(grammar(name), text.read_text(encoding="utf-8"))


_ASCII_STAND_IN = bytes(byte if byte < 0x80 else ord("a") for byte in range(256))


def parse(name: str, source: bytes) -> tree_sitter.Tree:
    """The tree of `source`; node offsets are offsets in `source`, but read text through
    them from `source` (a language with `ascii_stand_in` was parsed from other bytes)."""
    if _BY_NAME[name].ascii_stand_in:
        source = source.translate(_ASCII_STAND_IN)
    return tree_sitter.Parser(grammar(name)).parse(source)
