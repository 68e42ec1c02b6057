"""Fixture projects copied to a temporary workspace, a runtime with the language-server
manager installed, and a check that the real server is there (skip, or fail in CI)."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lsp_server.langservers.discovery import ServerNotFound, resolve_server
from lsp_server.langservers.manager import LanguageServerManager
from lsp_server.langservers.table import ROWS_BY_NAME
from lsp_server.protocol import CallResult
from lsp_server.runtime.dispatch import Runtime
from tests.conftest import clients_required
from tests.helpers import make_runtime, text_of

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"

# Per fixture language: the server row that serves it.
ROW_OF = {"python": "python", "typescript": "typescript", "c": "c", "bash": "bash", "go": "go"}


def require_server(language: str, root: Path) -> None:
    """Skip (or, with TOOLHOST_REQUIRE_CLIENTS=1, fail) when no server is installed."""
    row = ROWS_BY_NAME[ROW_OF[language]]
    try:
        resolve_server(row, root, {})
    except ServerNotFound as exc:
        message = f"{exc.detail}; scripts/setup/30-langservers.sh installs it"
        if clients_required():
            pytest.fail(message)
        pytest.skip(message)


def copy_fixture(language: str, destination: Path) -> Path:
    root = destination / language
    shutil.copytree(FIXTURES / language, root)
    root = root.resolve()
    if language == "c":
        # clangd indexes the project (cross-file references) from a compilation database,
        # whose paths must be absolute.
        sources = sorted(p.name for p in root.glob("*.c"))
        database = [
            {"directory": str(root), "file": str(root / name), "arguments": ["cc", "-c", name]}
            for name in sources
        ]
        (root / "compile_commands.json").write_text(json.dumps(database, indent=2))
    return root


def lsp_runtime(root: Path, settings: dict[str, object] | None = None) -> Runtime:
    return make_runtime(root, settings)


async def stop_servers(runtime: Runtime) -> None:
    for service in runtime.services.all():
        if isinstance(service, LanguageServerManager):
            await service.shutdown()


@pytest.fixture
async def project(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Runtime]:
    """`request.param` is the fixture language; yields a runtime over a copy of it."""
    language = str(request.param)
    root = copy_fixture(language, tmp_path)
    require_server(language, root)
    runtime = lsp_runtime(root)
    try:
        yield runtime
    finally:
        await stop_servers(runtime)


def rows_of(result: CallResult) -> str:
    """A lsp_* answer without its last line, the provenance (tested on its own in
    tests/langservers/test_editor_answers.py)."""
    text = text_of(result)
    head, _, last = text.rpartition("\n")
    return head if last.startswith("(answered by ") else text
