"""docs/ERRORS.md and runtime/errors.py agree in both directions, and every code raised in
lsp_server is one of the constants (no string literal bypasses errors.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from lsp_server.runtime import errors

ROOT = Path(__file__).resolve().parents[2]
# Exceptions whose first argument is an error code.
CODE_CARRIERS = {"ToolError", "PolicyRefusal"}


def constants() -> set[str]:
    return {
        value for name, value in vars(errors).items() if name.isupper() and isinstance(value, str)
    }


def documented() -> set[str]:
    """The codes in the first column of the table in docs/ERRORS.md."""
    codes: set[str] = set()
    for line in (ROOT / "docs" / "ERRORS.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            first_column = line.split(" | ")[0]
            codes.update(re.findall(r"`([^`]+)`", first_column))
    return codes


def literal_codes() -> list[str]:
    """ToolError("some.code", ...) and the like: codes written as string literals."""
    found = []
    for path in (ROOT / "lsp_server").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            first = node.args[0]
            if name in CODE_CARRIERS and isinstance(first, ast.Constant) and first.value:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {first.value}")
    return found


def test_every_code_is_documented() -> None:
    missing = sorted(constants() - documented())
    assert constants()
    assert not missing, f"document these codes in docs/ERRORS.md: {missing}"


def test_every_documented_code_is_a_constant() -> None:
    unknown = sorted(documented() - constants())
    assert documented()
    assert not unknown, f"docs/ERRORS.md lists codes errors.py does not define: {unknown}"


def test_codes_are_raised_through_the_constants() -> None:
    assert literal_codes() == []
