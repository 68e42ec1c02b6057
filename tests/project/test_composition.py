"""compose.py is the one composition root: nothing else builds a Runtime or its Services,
and nothing changes a Runtime after it is built."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lsp_server.runtime.approvals.verdicts import ModeApprover
from lsp_server.runtime.dispatch import Runtime
from tests.helpers import make_runtime

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "lsp_server" / "compose.py"
BUILT_ONLY_IN_COMPOSE = {"Runtime", "Services"}


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
