"""Fixtures for the sandbox tests: real bubblewrap (skip here, fail in CI without it)."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_server.sandbox.bubblewrap import BubblewrapLayout
from lsp_server.sandbox.platforms import find_backend
from tests.conftest import missing_part, require_program


@pytest.fixture
def bwrap() -> str:
    path = require_program("bwrap", "the shell sandbox runs commands under bubblewrap")
    found = find_backend(os.environ.get("PATH"))
    if found.problem is not None:
        missing_part(found.problem)
    return path


@pytest.fixture
def layout(bwrap: str, tmp_path: Path) -> BubblewrapLayout:
    """workspace-write over tmp_path/ws (under /tmp: the re-bind after the private /tmp)."""
    root = tmp_path / "ws"
    root.mkdir()
    return BubblewrapLayout(bwrap=bwrap, roots=(root.resolve(),), writable=True)


@pytest.fixture
def loopback_listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 that answers every connection with b"reached\\n"."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.sendall(b"reached\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        server.close()
        thread.join(5)
