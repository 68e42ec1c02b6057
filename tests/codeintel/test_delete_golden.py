"""delete_symbol golden tests per language: what goes with a definition, ambiguity and
unknown names. Every successful result must parse and differ only by removed lines."""

from __future__ import annotations

import difflib

import pytest

from lsp_server.codeintel import languages
from lsp_server.codeintel.delete import DeleteError, delete_symbol
from tests.codeintel.conftest import FIXTURES, GOLDEN, check_golden

# fixture -> (name, kind, parent) cases: a decorated/doc-commented definition, a method
# picked by parent, a nested function, an ambiguous name, an unknown name.
CASES: dict[str, list[tuple[str, str | None, str | None]]] = {
    "sample.py": [
        ("decorated", None, None),
        ("area", None, "Shape"),
        ("nested", None, None),
        ("Shape", None, None),
        ("label", "field", None),
        ("计算", None, None),
        ("area", None, None),
        ("decorate", None, None),
    ],
    "sample.js": [
        ("add", None, None),
        ("area", None, "Square"),
        ("nested", None, None),
        ("area", None, None),
        ("exported", None, None),
        ("arow", None, None),
    ],
    "sample.ts": [
        ("Square", None, None),
        ("area", "method", "Square"),
        ("inner", None, None),
        ("area", None, None),
        ("overload", None, None),
        ("Geometry", None, None),
        ("distanse", None, None),
    ],
    "sample.tsx": [
        ("Title", None, None),
        ("render", None, "Panel"),
        ("Button", None, None),
        ("Titel", None, None),
    ],
    "sample.go": [
        ("New", None, None),
        ("Area", None, "Square"),
        ("Green", None, None),
        ("Area", None, None),
        ("Square", None, None),
        ("Nwe", None, None),
    ],
    "sample.rs": [
        ("Square", "struct", None),
        ("area", None, "Square"),
        ("nested", None, None),
        ("area", None, None),
        ("new", None, None),
        ("MAX_SIZ", None, None),
    ],
    "Sample.java": [
        ("area", None, "Sample"),
        ("deep", None, "Inner"),
        ("area", None, None),
        ("add", None, None),
        ("add", None, "line=42"),
        ("Color", None, None),
        ("aera", None, None),
    ],
    "sample.c": [
        ("add", None, None),
        ("point", "struct", None),
        ("SQUARE", None, None),
        ("counter", None, None),
        ("mian", None, None),
    ],
    "sample.cpp": [
        ("Square", None, None),
        ("area", None, "Square"),
        ("twice", None, None),
        ("area", None, None),
        ("label", None, None),
        ("Sqare", None, None),
    ],
    "Sample.cs": [
        ("Area", None, "Square"),
        ("Deep", None, "Inner"),
        ("Area", None, None),
        ("Add", None, None),
        ("Point", None, None),
        ("Are", None, None),
    ],
    "sample.rb": [
        ("area", None, "Shape"),
        ("shout", None, None),
        ("area", None, None),
        ("Helpers", None, None),
        ("aria", None, None),
    ],
    "sample.sh": [
        ("greet", None, None),
        ("farewell", None, None),
        ("gret", None, None),
    ],
}


def only_removed_lines(before: str, after: str) -> bool:
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    return all(tag in ("equal", "delete") for tag, *_ in matcher.get_opcodes())


def run_case(name: str, case: tuple[str, str | None, str | None]) -> str:
    spec = languages.language_for_path(name)
    assert spec is not None
    source = (FIXTURES / name).read_bytes()
    symbol, kind, parent = case
    header = f"### delete {symbol} kind={kind} parent={parent}\n"
    line = None
    if parent is not None and parent.startswith("line="):
        line, parent = int(parent.removeprefix("line=")), None
    try:
        result = delete_symbol(spec, source, symbol, kind, parent, line)
    except DeleteError as error:
        return header + f"error ({error.reason}): {error.message}\n"
    after = result.new_source.decode()
    before = source.decode()
    assert only_removed_lines(before, after), "the result must only remove lines"
    assert not languages.parse(spec.name, result.new_source).root_node.has_error
    diff = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), name, name, n=2
    )
    return header + "".join(list(diff)[2:])


@pytest.mark.parametrize("name", sorted(CASES))
def test_delete_symbol_golden(name: str) -> None:
    text = "\n".join(run_case(name, case) for case in CASES[name])
    check_golden(GOLDEN / "delete" / f"{name}.txt", text)
