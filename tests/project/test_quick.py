"""`./run quick` covers every package: each top-level package of lsp_server and each tool
family keeps at least one test the quick marker expression selects (the one in
pyproject.toml, `[tool.toolhost] quick`, which ./run reads too).

A package counts as tested when a selected test lives in its mirror folder (tests/<package>/,
tests/tools/<family>/) or imports it; a tool family also when a selected test calls one of
its tools by a name no other family uses (tools are mostly called by name, not imported)."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from lsp_server.tools.registry import TOOL_MODULES

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "lsp_server"


def quick_expression() -> str:
    with (REPO / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["tool"]["toolhost"]["quick"])


def selected_files(expression: str) -> set[str]:
    """The test files (repo-relative) with at least one test `-m expression` selects."""
    collect = ["--collect-only", "-q", "-p", "no:cacheprovider", "-m", expression, "tests"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *collect],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}


def packages() -> list[str]:
    """`core`, `fs` ... (folders), `compose` (root modules) and `tools.files` ... (families)."""
    names = [p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()]
    names += [p.stem for p in PACKAGE.glob("*.py") if not p.name.startswith("__")]
    names += sorted(families())
    return sorted(names)


def families() -> dict[str, set[str]]:
    """Each tool family (`tools.files`, ..., `tools.web_fetch`) and its tools' names."""
    found: dict[str, set[str]] = {}
    for module in TOOL_MODULES:
        family = ".".join(module.__name__.split(".")[1:3])
        found.setdefault(family, set()).update(tool.name for tool in module.TOOLS)
    return found


def imported(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def strings(tree: ast.Module) -> set[str]:
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def untested(files: set[str], names: list[str]) -> list[str]:
    """The packages of `names` no test file of `files` covers (see the module docstring)."""
    tool_families = families()
    counts = Counter(tool for tools in tool_families.values() for tool in tools)
    covered: set[str] = set()
    for file in files:
        parts = Path(file).parts  # tests/<package>/... or tests/tools/<family>/...
        covered.add(parts[1])
        if parts[1] == "tools" and len(parts) > 3:
            covered.add(f"tools.{parts[2]}")
        tree = ast.parse((REPO / file).read_text(encoding="utf-8"))
        for module in imported(tree):
            dotted = module.split(".")
            if dotted[0] == "lsp_server" and len(dotted) > 1:
                covered.add(dotted[1])
                covered.add(".".join(dotted[1:3]))
        said = strings(tree)
        for family, tools in tool_families.items():
            if any(counts[tool] == 1 and tool in said for tool in tools):
                covered.add(family)
    return [name for name in names if name not in covered]


@pytest.mark.slow  # collects the whole suite in a subprocess
def test_every_package_and_tool_family_has_a_quick_test() -> None:
    missing = untested(selected_files(quick_expression()), packages())
    assert not missing, (
        f"no test selected by -m {quick_expression()!r} covers {missing}: add one to "
        "tests/<package>/ (or tests/tools/<family>/) that needs no real editor, agent, "
        "language server and is fast"
    )


def test_a_package_whose_tests_are_all_deselected_is_reported() -> None:
    """The check can fail: drop the files that cover `web` and it is named."""
    files = {"tests/web/test_web_fetch.py", "tests/fs/test_beneath.py"}
    assert untested({"tests/fs/test_beneath.py"}, ["fs", "web"]) == ["web"]
    assert untested(files, ["fs", "web"]) == []
