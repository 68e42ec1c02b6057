"""The four lsp_* tools against real servers on fixture projects, compared with golden
outputs (TOOLHOST_UPDATE_GOLDEN=1 rewrites them), plus positions on non-ASCII lines."""

from __future__ import annotations

import os
from typing import Any

import pytest

from lsp_server.runtime.dispatch import Runtime
from tests.helpers import call_tool, text_of
from tests.langservers.conftest import GOLDEN, rows_of

pytestmark = pytest.mark.langserver

# language -> (file, line, symbol) of a use in another file than its definition,
# the file with a type error, and a line with CJK and emoji before the symbol.
CASES: dict[str, dict[str, Any]] = {
    "python": {
        "use": ("main.py", 8, "make_circle"),
        "bad": "bad_types.py",
        "unicode": ("unicode_names.py", 3, "make_circle"),
        "unicode_expected": "shapes.py:15: def make_circle(radius: float) -> Circle:",
    },
    "typescript": {
        "use": ("src/main.ts", 7, "makeCircle"),
        "bad": "src/bad.ts",
        "unicode": ("src/unicode.ts", 3, "makeCircle"),
        "unicode_expected": (
            "src/shapes.ts:11: export function makeCircle(radius: number): Circle {"
        ),
    },
    "c": {
        "use": ("main.c", 6, "make_circle"),
        "bad": "bad.c",
        "unicode": ("unicode.c", 4, "make_circle"),
        "unicode_expected": "shapes.c:3: struct circle make_circle(double radius) {",
    },
    "bash": {
        "use": ("main.sh", 5, "greet"),
        "bad": "bad.sh",
        "unicode": ("main.sh", 7, "greet"),
        "unicode_expected": "lib.sh:4: greet() {",
    },
    "go": {
        "use": ("main.go", 10, "MakeCircle"),
        "bad": "bad/bad.go",
        "unicode": ("main.go", 12, "MakeCircle"),
        "unicode_expected": "shapes/shapes.go:10: func MakeCircle(radius float64) Circle {",
    },
}
LANGUAGES = list(CASES)


def check_golden(language: str, name: str, actual: str) -> None:
    path = GOLDEN / language / f"{name}.txt"
    if os.environ.get("TOOLHOST_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual + "\n", encoding="utf-8")
    assert path.exists(), f"no golden file {path}; run with TOOLHOST_UPDATE_GOLDEN=1"
    assert actual + "\n" == path.read_text(encoding="utf-8")


async def ok_text(runtime: Runtime, tool: str, arguments: dict[str, Any]) -> str:
    """The answer's rows; its provenance line says toolhost's own server answered."""
    result = await call_tool(runtime, tool, arguments)
    assert not result.is_error, text_of(result)
    assert text_of(result).rpartition("\n")[2].startswith("(answered by toolhost's ")
    return rows_of(result)


def position(case: tuple[str, int, str]) -> dict[str, Any]:
    file, line, symbol = case
    return {"path": file, "line": line, "symbol": symbol}


@pytest.mark.parametrize("project", LANGUAGES, indirect=True)
async def test_definition_references_hover_diagnostics(project: Runtime, request: Any) -> None:
    language = request.node.callspec.params["project"]
    case = CASES[language]
    use = position(case["use"])
    check_golden(language, "definition", await ok_text(project, "lsp_definition", use))
    check_golden(language, "references", await ok_text(project, "lsp_references", use))
    check_golden(language, "hover", await ok_text(project, "lsp_hover", use))
    diagnostics = await ok_text(project, "lsp_diagnostics", {"path": case["bad"]})
    check_golden(language, "diagnostics", diagnostics)
    assert not diagnostics.startswith("0 diagnostic")


@pytest.mark.parametrize("project", LANGUAGES, indirect=True)
async def test_symbol_after_cjk_and_emoji_resolves(project: Runtime, request: Any) -> None:
    language = request.node.callspec.params["project"]
    case = CASES[language]
    text = await ok_text(project, "lsp_definition", position(case["unicode"]))
    assert text == case["unicode_expected"]


@pytest.mark.parametrize("project", ["python"], indirect=True)
async def test_a_symbol_alone_is_resolved_through_the_code_index(project: Runtime) -> None:
    """No file and line: the one definition named so is found by the tree-sitter index."""
    definition = await ok_text(project, "lsp_definition", {"symbol": "make_circle"})
    assert definition == "shapes.py:15: def make_circle(radius: float) -> Circle:"
    references = await ok_text(project, "lsp_references", {"symbol": "make_circle"})
    assert "main.py:8:" in references and "shapes.py:15:" in references
