"""The house rules, checked on the code: dependencies point one way (engines pure, the
runtime knows no tool, no two packages import each other), small folders and modules, and
one name for one thing."""

from __future__ import annotations

import ast
from collections import Counter, defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "lsp_server"
# The ground floor: imports nothing above itself (core imports nothing of toolhost at run
# time; the others at most core, fs and one another).
GROUND = ("core", "fs", "shellparse", "home", "wire", "procs", "secrets")
# The engines: pure, they import the ground floor and nothing else.
ENGINES = ("codeintel", "search", "shell", "sandbox", "web", "notebook", "langservers")
# The top-level modules: the package's version, `python -m` and the composition root.
ROOT_MODULES = {"__init__.py", "__main__.py", "compose.py"}
MAX_MODULES_PER_FOLDER = 16
MAX_LINES_PER_MODULE = 400


def module_name(path: Path) -> str:
    dotted = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return dotted.removesuffix(".__init__")


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports_of(path: Path, *, type_checking: bool = True) -> set[str]:
    """The toolhost modules `path` imports; without `type_checking`, those under
    `if TYPE_CHECKING:` are left out (they never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skipped.update(id(inner) for inner in ast.walk(node))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                # `from pkg import module` imports that module; `from module import name`
                # imports the module.
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def violations(folder: str, forbidden: tuple[str, ...], *, type_checking: bool = True) -> list[str]:
    bad = []
    for path in (PACKAGE / folder).rglob("*.py"):
        for name in imports_of(path, type_checking=type_checking):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                bad.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
    return sorted(bad)


def unit_of(module: str) -> str:
    """The package a module belongs to: its folder, or itself for a module at the top
    (compose.py, dirs.py ...: the top folder holds the composition root beside leaves)."""
    path = MODULES[module]
    if path.name == "__init__.py":
        return module
    folder = module.rpartition(".")[0]
    return module if folder == "lsp_server" else folder


def package_graph() -> dict[str, dict[str, list[str]]]:
    """package -> package it imports at run time -> the imports that make the edge."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module, path in MODULES.items():
        for name in imports_of(path, type_checking=False):
            if name not in MODULES or unit_of(name) == unit_of(module):
                continue
            graph[unit_of(module)][unit_of(name)].append(f"{module} -> {name}")
    return graph


def top_package(module: str) -> str:
    """The top-level package (or root module) `module` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else module


def top_graph() -> dict[str, dict[str, list[str]]]:
    """top-level package -> top-level package it imports at run time -> the imports."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module, path in MODULES.items():
        for name in imports_of(path, type_checking=False):
            if name not in MODULES or top_package(name) == top_package(module):
                continue
            graph[top_package(module)][top_package(name)].append(f"{module} -> {name}")
    return graph


def test_the_ground_floor_imports_nothing_above_it() -> None:
    graph = top_graph()
    above = {
        f"{floor} -> {target}: {graph[floor][target][0]}"
        for floor in GROUND
        for target in graph.get(floor, {})
        if target not in GROUND
    }
    assert above == set()
    assert dict(graph.get("core", {})) == {}


def test_engines_import_nothing_above_the_ground_floor() -> None:
    graph = top_graph()
    above = {
        f"{engine} -> {target}: {graph[engine][target][0]}"
        for engine in ENGINES
        for target in graph.get(engine, {})
        if target not in GROUND
    }
    assert above == set()


def test_no_cycle_between_top_level_packages() -> None:
    """Counting top-level packages (runtime/ with its rooms as one), TYPE_CHECKING aside."""
    assert find_cycle(top_graph()) == []


def test_at_most_three_modules_at_the_package_root() -> None:
    assert {p.name for p in PACKAGE.glob("*.py")} <= ROOT_MODULES


def test_the_runtime_imports_no_tool_server_or_policy() -> None:
    forbidden = tuple(
        f"lsp_server.{layer}" for layer in ("tools", "server", "compose", "cli", "policy", "mcp")
    )
    assert violations("runtime", forbidden) == []


def test_tools_do_not_reach_the_faces() -> None:
    forbidden = tuple(f"lsp_server.{layer}" for layer in ("server", "compose", "cli", "mcp"))
    assert violations("tools", forbidden) == []


def test_checkpoints_use_only_the_runtime_rooms_below_dispatch() -> None:
    """The checkpoint engine and service sit under dispatch: the rooms they use (the disk,
    diffs) never the orchestration that calls them."""
    forbidden = tuple(
        f"lsp_server.{layer}" for layer in ("tools", "server", "compose", "cli", "policy", "mcp")
    )
    below_dispatch = tuple(
        name
        for name in MODULES
        if name.startswith("lsp_server.runtime.") and unit_of(name) == "lsp_server.runtime"
    )
    assert violations("checkpoints", forbidden + below_dispatch, type_checking=False) == []


def test_the_mcp_face_reaches_the_runtime_only_through_compose_and_public_rooms() -> None:
    forbidden = tuple(f"lsp_server.{layer}" for layer in ("server", "cli"))
    assert violations("mcp", forbidden) == []


def test_no_two_packages_import_each_other() -> None:
    graph = package_graph()
    both_ways = sorted(
        f"{a} <-> {b}: {graph[a][b][0]} / {graph[b][a][0]}"
        for a in graph
        for b in graph[a]
        if a < b and a in graph.get(b, {})
    )
    assert both_ways == []


def find_cycle(graph: dict[str, dict[str, list[str]]]) -> list[str]:
    state: dict[str, str] = {}
    cycle: list[str] = []

    def visit(node: str, trail: list[str]) -> bool:
        state[node] = "open"
        for nxt in graph.get(node, {}):
            if state.get(nxt) == "open":
                cycle.extend([*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt])
                return True
            if nxt not in state and visit(nxt, [*trail, nxt]):
                return True
        state[node] = "done"
        return False

    for start in sorted(graph):
        if start not in state and visit(start, [start]):
            break
    return cycle


def test_the_package_graph_has_no_cycle_at_all() -> None:
    """Counting every folder as a package of its own: no circle even between rooms."""
    assert find_cycle(package_graph()) == []


def test_no_folder_holds_more_than_16_modules_of_its_own() -> None:
    counts = {
        str(folder.relative_to(PACKAGE.parent)): len(
            [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        )
        for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir())]
    }
    assert {f: n for f, n in counts.items() if n > MAX_MODULES_PER_FOLDER} == {}


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in MODULES.values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES_PER_MODULE
    }
    assert long == {}


def test_one_name_one_thing() -> None:
    """No two modules share a basename, except the CLI's commands (cli/<command>.py names
    the command it runs) and the faces' server.py."""
    names = Counter(
        path.name
        for path in MODULES.values()
        if path.name not in ("__init__.py", "server.py") and path.parent.name != "cli"
    )
    cli_names = {p.name for p in (PACKAGE / "cli").glob("*.py")}
    assert {n: c for n, c in names.items() if c > 1} == {}
    # A CLI command may share its name with the engine it drives, never two engines.
    assert not [n for n in cli_names if names[n] > 1]


def test_every_package_has_a_map() -> None:
    """Each package's __init__ says what lives there (its docstring is the room's map)."""
    missing = [
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("__init__.py")
        if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert missing == []


def test_no_method_lives_outside_its_class() -> None:
    """A module-level function taking `self` is a method carved out of its class to pass
    the line cap (split by concept instead: a class of its own that the first owns)."""
    carved = [
        f"{path.relative_to(PACKAGE.parent)}:{node.name}"
        for path in MODULES.values()
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.args.args
        and node.args.args[0].arg == "self"
    ]
    assert carved == []
