"""Definitions of one file: parse, run the tags query, nest, normalise kinds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import attrs
import tree_sitter

from lsp_server.codeintel import languages
from lsp_server.codeintel.kinds import CONTAINER_KINDS, KINDS

SIGNATURE_MAX_CHARS = 200


@attrs.frozen
class Symbol:
    """One definition, as stored in the index and shown by outline/search."""

    name: str
    kind: str
    parent: str
    """Qualified chain of enclosing definitions (`Outer.Inner`), empty at top level."""
    start_line: int
    """1-based, first line of the definition node."""
    end_line: int
    start_byte: int
    end_byte: int
    signature: str
    """The source line holding the name, trimmed."""
    language: str

    @property
    def qualified_name(self) -> str:
        return f"{self.parent}.{self.name}" if self.parent else self.name


@attrs.frozen
class Definition:
    """A symbol together with its syntax nodes (in-process only: for delete_symbol)."""

    symbol: Symbol
    node: tree_sitter.Node
    name_node: tree_sitter.Node


SymbolRow = tuple[str, str, str, int, int, int, int, str, str]
"""name, kind, parent, start_line, end_line, start_byte, end_byte, signature, language"""


class _Match(NamedTuple):
    start: int
    end: int
    pattern: int
    kind: str  # a KINDS value or "impl" for @scope
    node: tree_sitter.Node
    name_node: tree_sitter.Node
    name: str
    explicit_parent: str
    is_scope: bool


_Resolved = tuple[_Match, str, str]
"""A definition's match, its kind after nesting (a function in a class is a method), and
its parent chain."""


def _text(source: bytes, node: tree_sitter.Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def end_line_of(node: tree_sitter.Node) -> int:
    """1-based last line; a node ending at column 0 ends on the line before."""
    row, column = node.end_point
    if column == 0 and row > node.start_point[0]:
        return row
    return row + 1


def _matches(spec_name: str, tree: tree_sitter.Tree, source: bytes) -> list[_Match]:
    query = languages.tags_query(spec_name)
    found: dict[tuple[int, int, str], _Match] = {}
    # Hot loop of the cold build: node properties are C calls, so each is read once, and
    # names are sliced from `source` (what the tree was parsed from).
    for pattern, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
        names = captures.get("name")
        if not names:
            continue
        parents = captures.get("parent")
        explicit_parent = _text(source, parents[0]) if parents else ""
        for capture, nodes in captures.items():
            if capture == "scope":
                kind, is_scope = "impl", True
            elif capture.startswith("definition."):
                kind, is_scope = capture[11:], False
                if kind not in KINDS:
                    continue
            else:
                continue
            node = nodes[0]
            start, end = node.start_byte, node.end_byte
            for name_node in names:
                name = _text(source, name_node)
                key = (start, end, name)
                known = found.get(key)
                if known is None or known.pattern > pattern:
                    found[key] = _Match(
                        start, end, pattern, kind, node, name_node, name, explicit_parent,
                        is_scope,
                    )  # fmt: skip
    return sorted(found.values(), key=lambda m: (m.start, -m.end))


def _contains(outer: _Match, inner: _Match) -> bool:
    if outer.start == inner.start and outer.end == inner.end:
        return False
    return outer.start <= inner.start and inner.end <= outer.end


def _signature(source: bytes, name_node: tree_sitter.Node) -> str:
    at = name_node.start_byte
    end = source.find(b"\n", at)
    line = source[source.rfind(b"\n", 0, at) + 1 : end if end >= 0 else len(source)]
    text = line.decode("utf-8", errors="replace").strip()
    if len(text) > SIGNATURE_MAX_CHARS:
        text = text[: SIGNATURE_MAX_CHARS - 1] + "…"
    return text


def _resolved(spec_name: str, tree: tree_sitter.Tree, source: bytes) -> Iterator[_Resolved]:
    """Every definition's match in source order, with its kind and parent chain."""
    stack: list[tuple[_Match, str]] = []  # (container, its qualified name)
    for match in _matches(spec_name, tree, source):
        while stack and not _contains(stack[-1][0], match):
            stack.pop()
        chain = stack[-1][1] if stack else ""
        name = match.name
        if match.explicit_parent:
            chain = f"{chain}.{match.explicit_parent}" if chain else match.explicit_parent
        if match.is_scope:
            stack.append((match, f"{chain}.{name}" if chain else name))
            continue
        kind = match.kind
        container_kind = stack[-1][0].kind if stack else None
        if kind == "function" and (container_kind in CONTAINER_KINDS or match.explicit_parent):
            kind = "method"
        yield match, kind, chain
        stack.append((match, f"{chain}.{name}" if chain else name))


def definitions(spec_name: str, tree: tree_sitter.Tree, source: bytes) -> list[Definition]:
    """Every definition of the tree in source order, parents resolved."""
    result: list[Definition] = []
    for match, kind, chain in _resolved(spec_name, tree, source):
        symbol = Symbol(
            name=match.name,
            kind=kind,
            parent=chain,
            start_line=match.node.start_point[0] + 1,
            end_line=end_line_of(match.node),
            start_byte=match.start,
            end_byte=match.end,
            signature=_signature(source, match.name_node),
            language=spec_name,
        )
        result.append(Definition(symbol, match.node, match.name_node))
    return result


def symbol_rows(spec_name: str, source: bytes) -> list[SymbolRow]:
    """What `outline` gives, as plain tuples (the index's rows: no objects in between)."""
    tree = languages.parse(spec_name, source)
    rows: list[SymbolRow] = []
    for match, kind, chain in _resolved(spec_name, tree, source):
        rows.append(
            (match.name, kind, chain, match.node.start_point[0] + 1, end_line_of(match.node),
             match.start, match.end, _signature(source, match.name_node), spec_name)
        )  # fmt: skip
    return rows


def outline(spec_name: str, source: bytes) -> list[Symbol]:
    tree = languages.parse(spec_name, source)
    return [d.symbol for d in definitions(spec_name, tree, source)]
