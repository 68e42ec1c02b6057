"""The MCP SDK's import in `toolhost mcp` (mcp/stdio/loader.py): warming up waits between its
steps while a tool call runs, and a message that needs the SDK ends the waiting."""

from __future__ import annotations

import sys
import types

import pytest

from lsp_server.mcp.stdio import loader as loader_module
from lsp_server.mcp.stdio.loader import Loader


def test_warming_up_waits_while_a_call_runs() -> None:
    calls = {"running": True}
    loader = Loader()
    loader.warm_up(lambda: calls["running"])
    assert not loader._done.wait(0.3)  # a call runs: the first step waits
    calls["running"] = False
    assert loader._done.wait(10)
    assert loader._error is None
    assert loader._module is sys.modules[loader_module.SERVER_MODULE]


def test_a_message_that_needs_the_sdk_ends_the_wait() -> None:
    loader = Loader()
    loader.warm_up(lambda: True)  # a call that never ends
    assert not loader._done.wait(0.3)
    loader.start()
    assert loader._done.wait(10)
    assert loader._error is None


def test_every_step_is_a_module_the_server_imports() -> None:
    """The steps name the SDK's modules as they are: a renamed one would only make a larger
    step, so this says when the list needs a look."""
    import importlib

    for step in loader_module._STEPS:
        importlib.import_module(step)


def test_warming_up_waits_while_the_checkpoints_place_the_first_watches() -> None:
    """The watches a first command's snapshot waits for (checkpoints/watch_start.py) are
    placed in a thread that would share the GIL with the import: it waits for them too."""
    from lsp_server.checkpoints import watch_start
    from lsp_server.mcp.stdio.front import _busy

    busy = _busy(lambda: False)
    assert not busy()
    watch_start._placing.add(-1)
    try:
        assert busy()
    finally:
        watch_start._placing.discard(-1)
    assert not busy() and _busy(lambda: True)()


def test_a_watch_start_module_still_being_imported_is_not_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The runtime's import in one thread has put watch_start in sys.modules but not run
    its body yet, while the SDK's import asks whether to wait (a CI run ended there in
    AttributeError, and the server with it)."""
    from lsp_server.mcp.stdio.front import _busy

    half = types.ModuleType("lsp_server.checkpoints.watch_start")
    monkeypatch.setitem(sys.modules, "lsp_server.checkpoints.watch_start", half)
    assert not _busy(lambda: False)()
    assert _busy(lambda: True)()
