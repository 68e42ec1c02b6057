"""delete_symbol's core: find one definition by name, compute the lines that go with it
(decorators, attributes, the doc comment block above), remove them, tidy blank lines, and
check that the result still parses."""

from __future__ import annotations

import difflib
import re
from typing import Literal

import attrs
import tree_sitter

from lsp_server.codeintel import languages
from lsp_server.codeintel.languages import LanguageSpec
from lsp_server.codeintel.outline import Definition, definitions, end_line_of

Reason = Literal["not_found", "ambiguous", "multi_name", "shared_line", "syntax_error"]

_BLOCK_OPENER = re.compile(rb"([{(\[:|]|\bdo|^\s*(class|module|def)\b.*)\s*$")
_BLOCK_CLOSER = re.compile(rb"^\s*([})\]]|end\b)")
_TRAILING_PUNCTUATION = b";,"


class DeleteError(Exception):
    """Why nothing was deleted; `candidates` lists the matching definitions or close names."""

    def __init__(self, reason: Reason, message: str, candidates: list[str] | None = None):
        super().__init__(message)
        self.reason: Reason = reason
        self.message = message
        self.candidates = candidates or []


@attrs.frozen
class Deletion:
    definition: Definition
    new_source: bytes
    first_line: int
    """1-based first removed line (the doc comment or decorator when there is one)."""
    last_line: int
    removed_lines: int
    """Lines removed in total, blank separators included."""


def describe(definition: Definition) -> str:
    symbol = definition.symbol
    return f"line {symbol.start_line}: {symbol.kind} {symbol.qualified_name}"


def _parent_matches(chain: str, wanted: str) -> bool:
    wanted = wanted.replace("::", ".").strip(".")
    return chain == wanted or chain.endswith("." + wanted)


def _selector(target: Definition, rivals: list[Definition]) -> str:
    """The kind/parent arguments that pick `target` out of `rivals`."""
    symbol = target.symbol
    options: list[dict[str, str]] = [{"kind": symbol.kind}]
    if symbol.parent:
        last = symbol.parent.rsplit(".", 1)[-1]
        options += [{"parent": last}, {"parent": symbol.parent}]
        options += [{"kind": symbol.kind, "parent": last}]
        options += [{"kind": symbol.kind, "parent": symbol.parent}]
    for option in options:
        picked = [d for d in rivals if _selected(d, option.get("kind"), option.get("parent"))]
        if picked == [target]:
            return ", ".join(f'{key}="{value}"' for key, value in option.items())
    return f"same kind and parent as another: line={symbol.start_line}"


def _selected(definition: Definition, kind: str | None, parent: str | None) -> bool:
    symbol = definition.symbol
    if kind is not None and symbol.kind != kind:
        return False
    return parent is None or _parent_matches(symbol.parent, parent)


def find_definition(
    defs: list[Definition], name: str, kind: str | None, parent: str | None,
    line: int | None = None,
) -> Definition:  # fmt: skip
    named = [d for d in defs if d.symbol.name == name]
    if line is not None:
        # The innermost definition of that name whose lines hold `line` (overloads).
        holding = [d for d in named if d.symbol.start_line <= line <= d.symbol.end_line]
        named = holding[-1:] if holding else named
    if not named:
        names = sorted({d.symbol.name for d in defs})
        close = difflib.get_close_matches(name, names, n=5, cutoff=0.6)
        close += [n for n in names if n.lower() == name.lower() and n not in close]
        listed = ", ".join(close) if close else "none"
        raise DeleteError(
            "not_found", f"no definition named {name!r}; close names: {listed}", close
        )
    picked = [d for d in named if _selected(d, kind, parent)]
    if len(picked) == 1:
        return picked[0]
    pool = picked or named
    lines = [f"{describe(d)} ({_selector(d, named)})" for d in pool]
    if not picked:
        wanted = ", ".join(f"{k}={v!r}" for k, v in (("kind", kind), ("parent", parent)) if v)
        message = f"no definition named {name!r} with {wanted}; candidates:\n" + "\n".join(lines)
        raise DeleteError("not_found", message, lines)
    message = f"{len(picked)} definitions named {name!r}; pick one with kind/parent/line:\n"
    raise DeleteError("ambiguous", message + "\n".join(lines), lines)


def _outer_node(definition: Definition, spec: LanguageSpec) -> tree_sitter.Node:
    """Climb wrappers (export, decorators, a one-declarator declaration) around the node."""
    node = definition.node
    while node.parent is not None and node.parent.type in spec.wrappers:
        same_type = [c for c in node.parent.named_children if c.type == node.type]
        if len(same_type) != 1:
            break
        node = node.parent
    return node


def _check_single_name(
    target: Definition, defs: list[Definition], node: tree_sitter.Node, spec: LanguageSpec
) -> None:
    span = (target.node.start_byte, target.node.end_byte)
    twins = [d for d in defs if d is not target and (d.node.start_byte, d.node.end_byte) == span]
    siblings = []
    # Declarators of one declaration (`const a = 1, b = 2`); separate statements that
    # share a line are the shared-line check's business.
    if node.parent is not None and node.parent.type in spec.wrappers:
        rows = range(node.start_point[0], node.end_point[0] + 1)
        siblings = [
            c
            for c in node.parent.named_children
            if c.type == node.type and c != node and c.start_point[0] in rows
        ]
    if twins or siblings:
        raise DeleteError(
            "multi_name",
            f"the declaration of {target.symbol.name!r} names several symbols; "
            "use edit_file to change it",
        )


def _line_starts(source: bytes) -> list[int]:
    starts = [0]
    starts += [m.end() for m in re.finditer(rb"\n", source)]
    return starts


def _starts_its_line(source: bytes, starts: list[int], node: tree_sitter.Node) -> bool:
    row = node.start_point[0]
    return not source[starts[row] : node.start_byte].strip()


def _whole_line_node(root: tree_sitter.Node, byte: int) -> tree_sitter.Node | None:
    """The largest node that starts at `byte` (a comment or attribute opening a line)."""
    node = root.descendant_for_byte_range(byte, byte + 1)
    while node is not None and node.parent is not None and node.parent.start_byte == byte:
        if node.parent == root:
            break
        node = node.parent
    return node


def _is_attached(node: tree_sitter.Node, spec: LanguageSpec) -> bool:
    return "comment" in node.type or node.type in spec.attached


def _first_row(
    source: bytes, starts: list[int], root: tree_sitter.Node, node: tree_sitter.Node,
    spec: LanguageSpec,
) -> int:  # fmt: skip
    """Extend upwards over attached attributes and the comment block directly above."""
    row = _same_line_head(node, spec).start_point[0]
    while row > 0:
        above_start, above_end = starts[row - 1], starts[row] - 1
        text = source[above_start:above_end]
        if not text.strip():
            break  # a blank line ends the attached block
        first = above_start + len(text) - len(text.lstrip())
        above = _whole_line_node(root, first)
        if (
            above is None
            or not _is_attached(above, spec)
            or end_line_of(above) != row
            or not _starts_its_line(source, starts, above)
        ):
            break
        row = above.start_point[0]
    return row


def _same_line_head(node: tree_sitter.Node, spec: LanguageSpec) -> tree_sitter.Node:
    """The first of the attributes on the definition's own line (`#[inline] fn f()`)."""
    head, previous = node, node.prev_named_sibling
    while (
        previous is not None
        and previous.end_point[0] == node.start_point[0]
        and _is_attached(previous, spec)
    ):
        head, previous = previous, previous.prev_named_sibling
    return head


def _check_shared_lines(
    source: bytes, starts: list[int], node: tree_sitter.Node, first_row: int, spec: LanguageSpec
) -> int:
    """Refuse when code shares the definition's lines; return the last row to delete."""
    head = _same_line_head(node, spec)
    if first_row == node.start_point[0] and not _starts_its_line(source, starts, head):
        raise DeleteError(
            "shared_line",
            f"line {node.start_point[0] + 1} holds other code before the definition; use edit_file",
        )
    last_row = end_line_of(node) - 1
    line_end = starts[last_row + 1] - 1 if last_row + 1 < len(starts) else len(source)
    rest = source[max(node.end_byte, starts[last_row]) : line_end].strip()
    rest = rest.lstrip(_TRAILING_PUNCTUATION).strip()
    prefixes = tuple(p.encode() for p in spec.comment_prefixes)
    if rest and not rest.startswith(prefixes):
        raise DeleteError(
            "shared_line",
            f"line {last_row + 1} holds other code after the definition; use edit_file",
        )
    return last_row


def _tidy_blank_lines(
    lines: list[bytes], first: int, last: int, top_level: int | None
) -> list[bytes]:
    """Remove rows first..last and collapse the blank lines left around them."""
    before = 0
    while first - before - 1 >= 0 and not lines[first - before - 1].strip():
        before += 1
    after = 0
    while last + after + 1 < len(lines) and not lines[last + after + 1].strip():
        after += 1
    previous = lines[first - before - 1] if first - before - 1 >= 0 else None
    following = lines[last + after + 1] if last + after + 1 < len(lines) else None
    at_edge = previous is None or following is None or not following.strip()
    opens_block = previous is not None and before == 0 and _BLOCK_OPENER.search(previous.rstrip())
    closes_block = following is not None and after == 0 and _BLOCK_CLOSER.match(following)
    if at_edge or opens_block or closes_block:
        keep = 0
    else:
        keep = max(before, after)
        if top_level is not None:
            keep = min(keep, top_level)
    blanks = lines[first - before : first] + lines[last + 1 : last + 1 + after]
    return lines[: first - before] + blanks[:keep] + lines[last + 1 + after :]


def _check_body_left(node: tree_sitter.Node, spec: LanguageSpec) -> None:
    body = node.parent
    if body is None or body.type not in spec.non_empty_blocks:
        return
    others = [c for c in body.named_children if c != node and "comment" not in c.type]
    if not others:
        raise DeleteError(
            "syntax_error",
            f"removing it would leave an empty body at line {body.start_point[0] + 1}; "
            "nothing was written: use edit_file (e.g. to put `pass` in its place)",
        )


def _error_count(node: tree_sitter.Node) -> int:
    if not node.has_error:
        return 0
    own = 1 if node.is_error or node.is_missing else 0
    return own + sum(_error_count(child) for child in node.children)


def delete_symbol(
    spec: LanguageSpec, source: bytes, name: str, kind: str | None = None,
    parent: str | None = None, line: int | None = None,
) -> Deletion:  # fmt: skip
    """The source without the named definition, or a DeleteError saying why not."""
    tree = languages.parse(spec.name, source)
    defs = definitions(spec.name, tree, source)
    target = find_definition(defs, name, kind, parent, line)
    node = _outer_node(target, spec)
    _check_single_name(target, defs, node, spec)
    _check_body_left(node, spec)
    starts = _line_starts(source)
    first_row = _first_row(source, starts, tree.root_node, node, spec)
    last_row = _check_shared_lines(source, starts, node, first_row, spec)
    lines = re.split(rb"(?<=\n)", source)
    if lines and lines[-1] == b"":
        lines.pop()
    is_top_level = node.parent is not None and node.parent.parent is None
    top_level = spec.top_level_blank_lines if is_top_level else None
    kept = _tidy_blank_lines(lines, first_row, last_row, top_level)
    new_source = b"".join(kept)
    new_tree = languages.parse(spec.name, new_source)
    if _error_count(new_tree.root_node) > _error_count(tree.root_node):
        raise DeleteError(
            "syntax_error",
            f"removing lines {first_row + 1}-{last_row + 1} would leave a syntax error; "
            "nothing was written: use edit_file",
        )
    return Deletion(
        definition=target,
        new_source=new_source,
        first_line=first_row + 1,
        last_line=last_row + 1,
        removed_lines=len(lines) - len(kept),
    )
