"""Fixtures shared by every test layer."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

from tests.network_fence import fence, site  # noqa: F401 (fixtures: the network fence)

EXAMPLE_WORKSPACE = Path(__file__).resolve().parent.parent / "examples" / "workspace"


def clients_required() -> bool:
    """In CI (TOOLHOST_REQUIRE_CLIENTS=1) a missing real client or server is a failure."""
    return os.environ.get("TOOLHOST_REQUIRE_CLIENTS") == "1"


def missing_part(why: str) -> NoReturn:
    """A real client, server or tool is missing: skip here, fail in CI."""
    if clients_required():
        pytest.fail(why)
    pytest.skip(why)


def require_program(name_or_path: str, why: str) -> str:
    """The program's path; skip (or fail in CI) with a clear reason when it is missing."""
    found = shutil.which(name_or_path) or (
        name_or_path if Path(name_or_path).is_file() and os.access(name_or_path, os.X_OK) else None
    )
    if found:
        return found
    missing_part(f"{name_or_path} is not installed ({why}); `./run setup` installs it")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of examples/workspace."""
    root = tmp_path / "workspace"
    shutil.copytree(EXAMPLE_WORKSPACE, root)
    return root


@pytest.fixture(autouse=True)
def _isolated_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep toolhost's state folder (audit log, index, results) out of the real home."""
    monkeypatch.setenv("TOOLHOST_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    # ... and the user's own config file (~/.config/toolhost/config.toml) out of the tests.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    # ... and the attach sockets of `toolhost serve` out of the user's runtime folder.
    runtime = tmp_path_factory.mktemp("run")
    runtime.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
