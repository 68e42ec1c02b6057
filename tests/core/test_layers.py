"""Dependencies point one way: the engines are pure, the runtime knows no tool, and only
compose.py, server/ and cli/ see the whole house."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "lsp_server"
ENGINES = ("codeintel", "search", "shell", "sandbox", "web", "notebook", "langservers")
# Leaf modules every layer may use: the error vocabulary, the one path/URI helper, opening
# files beneath a root, the shell word splitter (they import nothing of toolhost but errors).
LEAVES = {
    "lsp_server.runtime.errors",
    "lsp_server.runtime.uris",
    "lsp_server.runtime.beneath",
    "lsp_server.policy.shell_words",
}


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                # `from pkg import module` imports that module; `from module import name`
                # imports the module.
                candidate = f"{node.module}.{alias.name}"
                is_module = (PACKAGE.parent / candidate.replace(".", "/")).with_suffix(".py")
                found.add(candidate if is_module.is_file() else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def violations(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in (PACKAGE / folder).rglob("*.py"):
        for name in imports_of(path):
            if name in LEAVES or any(name.startswith(leaf + ".") for leaf in LEAVES):
                continue
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                bad.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
    return sorted(bad)


def test_engines_import_nothing_of_runtime_server_or_tools() -> None:
    forbidden = tuple(
        f"lsp_server.{layer}"
        for layer in ("runtime", "server", "tools", "compose", "cli", "policy")
    )
    assert [v for engine in ENGINES for v in violations(engine, forbidden)] == []


def test_the_runtime_imports_no_tool_server_or_policy() -> None:
    forbidden = tuple(
        f"lsp_server.{layer}" for layer in ("tools", "server", "compose", "cli", "policy")
    )
    assert violations("runtime", forbidden) == []


def test_tools_do_not_reach_the_faces() -> None:
    forbidden = tuple(f"lsp_server.{layer}" for layer in ("server", "compose", "cli"))
    assert violations("tools", forbidden) == []
