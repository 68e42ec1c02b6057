"""docs/ARCHITECTURE.md is the map of the package: it must name every top-level package
and root module of lsp_server/, draw the same ground floor and engines as the layer test,
and point at every runnable example, so that the map cannot go stale. Each room's own map
(its __init__'s docstring) names only modules that exist."""

from __future__ import annotations

import ast
import re

from tests.project.test_layers import ENGINES, GROUND, PACKAGE

REPO = PACKAGE.parent
DOC = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")


def figure_line(floor: str) -> set[str]:
    """The packages on one floor of the figure (the code block under "## The floors")."""
    figure = DOC.split("## The floors", 1)[1].split("```", 2)[1]
    line = next(line for line in figure.splitlines() if line.startswith(floor))
    return set(re.findall(r"(\w+)/", line))


def test_every_top_level_package_is_placed() -> None:
    packages = [p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()]
    modules = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    missing = [f"{name}/" for name in packages if f"`{name}/`" not in DOC]
    missing += [name for name in modules if f"`{name}`" not in DOC]
    assert missing == []


def test_the_figure_draws_the_layer_tests_floors() -> None:
    assert figure_line("ground") == set(GROUND)
    assert figure_line("engines") == set(ENGINES)


def test_every_example_is_on_the_map() -> None:
    examples = [p.name for p in (REPO / "examples").iterdir() if p.is_file()]
    assert [name for name in examples if f"examples/{name}" not in DOC] == []


def test_every_module_a_room_map_names_exists() -> None:
    """`name.py` in a room's map is in that room (or a room under it, or the package root);
    `path/name.py` is found from the repository, the package or the room."""
    missing = []
    for init in PACKAGE.rglob("__init__.py"):
        room = init.parent
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        for found in re.finditer(r"(?<![\w/.])((?:[\w.]+/)*)(\w+\.py)\b", doc):
            folder, name = found.groups()
            if folder:
                bases = (REPO, PACKAGE, room)
                exists = any((base / folder / name).exists() for base in bases)
            else:
                exists = any(room.rglob(name)) or (PACKAGE / name).exists()
            if not exists:
                missing.append(f"{init.relative_to(REPO)}: {found.group(0)}")
    assert missing == []
