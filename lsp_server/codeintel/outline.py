"""Definitions of one file: parse, run the tags query, nest, normalise kinds."""

from __future__ import annotations

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


def node_text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def end_line_of(node: tree_sitter.Node) -> int:
    """1-based last line; a node ending at column 0 ends on the line before."""
    row, column = node.end_point
    if column == 0 and row > node.start_point[0]:
        return row
    return row + 1


def _matches(spec_name: str, tree: tree_sitter.Tree) -> list[_Match]:
    query = languages.tags_query(spec_name)
    found: dict[tuple[int, int, str], _Match] = {}
    # Hot loop of the cold build: node properties are C calls, so each is read once.
    for pattern, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
        names = captures.get("name")
        if not names:
            continue
        parents = captures.get("parent")
        explicit_parent = node_text(parents[0]) if parents else ""
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
                name = node_text(name_node)
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


def definitions(spec_name: str, tree: tree_sitter.Tree, source: bytes) -> list[Definition]:
    """Every definition of the tree in source order, parents resolved."""
    stack: list[tuple[_Match, str]] = []  # (container, its qualified name)
    result: list[Definition] = []
    for match in _matches(spec_name, tree):
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
        symbol = Symbol(
            name=name,
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
        stack.append((match, symbol.qualified_name))
    return result


def outline(spec_name: str, source: bytes) -> list[Symbol]:
    tree = languages.parse(spec_name, source)
    return [d.symbol for d in definitions(spec_name, tree, source)]
