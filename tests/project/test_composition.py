"""compose.py is the one composition root: nothing else builds a Runtime or its Services,
nothing changes a Runtime or its Lifecycle after it is built, and every face opens its
runtime with compose.open_runtime (the layers loaded there, or handed to it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lsp_server.runtime.approvals.verdicts import ModeApprover
from lsp_server.runtime.dispatch import Runtime
from tests.helpers import make_runtime

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "lsp_server" / "compose.py"
LIFECYCLE = ROOT / "lsp_server" / "runtime" / "lifecycle.py"
BUILT_ONLY_IN_COMPOSE = {"Runtime", "Services"}
HOOKS = {"start_hooks", "shutdown_hooks", "kill_hooks"}
FACES = ("server", "acp", "cli", "mcp")
OPENS_A_RUNTIME = {
    "lsp_server/server/server.py",  # toolhost serve: the editor's runtime
    "lsp_server/server/isolated_sessions.py",  # toolhost serve: an isolated session's
    "lsp_server/acp/workspaces.py",  # toolhost acp: one per root
    "lsp_server/cli/call.py",  # toolhost call
    "lsp_server/cli/revert.py",  # toolhost revert and toolhost checkpoints
    "lsp_server/mcp/calls/local.py",  # toolhost mcp without an editor
}
LOADS_LAYERS_ITSELF = {
    "lsp_server/server/server.py": "the editor's layers with its initializationOptions, "
    "settled before the runtime (handed to open_runtime), read again when its settings change",
    "lsp_server/server/config_state.py": "a reload reconfigures the running runtime",
    "lsp_server/cli/doctor.py": "reports the config; opens no runtime",
    "lsp_server/cli/status.py": "reports the config; opens no runtime",
}


def python_files() -> list[Path]:
    return [
        path
        for folder in ("lsp_server", "tests", "bench")
        for path in (ROOT / folder).rglob("*.py")
        if "fixtures" not in path.parts
    ]


def called_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def offences(path: Path, root: Path = ROOT) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call):
            name = called_name(node)
            if name in BUILT_ONLY_IN_COMPOSE:
                found.append(f"{path.relative_to(root)}:{node.lineno}: constructs {name}")
            if name in {"register", "register_factory"} and "services" in ast.unparse(node.func):
                found.append(f"{path.relative_to(root)}:{node.lineno}: installs a service")
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and ast.unparse(target.value).endswith(
                    "runtime"
                ):
                    found.append(f"{path.relative_to(root)}:{node.lineno}: sets {target.attr}")
    return found


def hook_offences(path: Path, root: Path = ROOT) -> list[str]:
    """Lifecycle hooks touched (added, run by hand) outside compose.py and lifecycle.py."""
    return [
        f"{path.relative_to(root)}:{node.lineno}: touches {node.attr}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if isinstance(node, ast.Attribute) and node.attr in HOOKS
    ]


def calls_of(path: Path) -> dict[str, list[ast.Call]]:
    """The calls in `path`, by the name called."""
    found: dict[str, list[ast.Call]] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call) and (name := called_name(node)) is not None:
            found.setdefault(name, []).append(node)
    return found


def face_modules() -> dict[str, dict[str, list[ast.Call]]]:
    return {
        path.relative_to(ROOT).as_posix(): calls_of(path)
        for face in FACES
        for path in (ROOT / "lsp_server" / face).rglob("*.py")
    }


def test_every_face_opens_its_runtime_with_open_runtime() -> None:
    faces = face_modules()
    assert {path for path, calls in faces.items() if "open_runtime" in calls} == OPENS_A_RUNTIME
    # Tests and benchmarks build from a Config of their own; no module of the package does.
    building = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "lsp_server").rglob("*.py")
        if path != COMPOSE and "build_runtime" in calls_of(path)
    ]
    assert building == []


def test_no_face_loads_layers_for_a_runtime_by_hand() -> None:
    faces = face_modules()
    loading = {path for path, calls in faces.items() if "load_layers" in calls}
    assert loading <= set(LOADS_LAYERS_ITSELF), "a face loads layers: open_runtime does"
    for path in loading & OPENS_A_RUNTIME:  # what it loaded, it hands to open_runtime
        for call in faces[path]["open_runtime"]:
            assert "loaded" in {keyword.arg for keyword in call.keywords}, path


def test_only_compose_and_the_lifecycle_touch_its_hooks() -> None:
    allowed = {COMPOSE, LIFECYCLE, Path(__file__).resolve()}
    found = [line for path in python_files() if path not in allowed for line in hook_offences(path)]
    assert found == []


def test_only_compose_builds_a_runtime_or_installs_a_service() -> None:
    allowed = {COMPOSE, Path(__file__).resolve()}  # this file tries it on purpose, below
    found = [line for path in python_files() if path not in allowed for line in offences(path)]
    assert found == []


def test_the_scan_sees_what_it_forbids(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "runtime = Runtime(registry)\n"
        "ctx.services.register(JobManager, manager)\n"
        "self.runtime.approver = other\n",
        encoding="utf-8",
    )
    found = sorted(line.split(": ", 1)[1] for line in offences(sample, tmp_path))
    assert found == ["constructs Runtime", "installs a service", "sets approver"]
    sample.write_text(
        "lifecycle.shutdown_hooks.insert(0, listener.close)\n"
        "for hook in lifecycle.kill_hooks:\n    hook()\n"
        "loaded = load_layers(None, roots, dirs)\n"
        "runtime, lifecycle = compose.build_runtime(roots, loaded.config)\n",
        encoding="utf-8",
    )
    hooks = sorted(line.split(": ", 1)[1] for line in hook_offences(sample, tmp_path))
    assert hooks == ["touches kill_hooks", "touches shutdown_hooks"]
    assert {"build_runtime", "load_layers"} <= set(calls_of(sample))


def test_compose_builds_runtimes(tmp_path: Path) -> None:
    assert "Runtime(" in COMPOSE.read_text(encoding="utf-8")
    assert isinstance(make_runtime(tmp_path), Runtime)


def test_a_built_runtime_cannot_be_changed(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    with pytest.raises(AttributeError, match=r"compose\.py"):
        runtime.approver = ModeApprover("bypass", "allow")
    with pytest.raises(AttributeError):
        runtime.documents = None
    assert isinstance(runtime.listeners, tuple)  # no listener slipped in afterwards
    with pytest.raises(AttributeError):
        runtime.services.register  # type: ignore[attr-defined]  # noqa: B018
