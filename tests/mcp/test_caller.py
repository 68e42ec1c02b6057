"""The caller a face hands Runtime.call (runtime/context.py) reaches the call's approval: a
local MCP runtime asks through the form the call brings, a nested call through its parent's,
and a call that brings none asks nobody."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsp_server import compose
from lsp_server.core.errors import PERMISSION_UNATTENDED
from lsp_server.home.dirs import Dirs
from lsp_server.mcp.calls.elicit import ElicitationAsker
from lsp_server.protocol import CallParams
from lsp_server.runtime.context import NOBODY, Caller

EDIT = {"path": "notes.md", "old_string": "line two", "new_string": "line 2"}


async def test_the_callers_form_asks_for_its_writes_and_its_nested_calls(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.md").write_text("line one\nline two\nline three\n")
    dirs = Dirs(state=tmp_path / "state", config=tmp_path / "config")
    opened = compose.open_runtime([root], dirs, asker=ElicitationAsker(), long_lived=False)
    runtime = opened.runtime
    asked: list[str] = []

    async def elicit(message: str, schema: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        asked.append(message)
        return "accept", {"decision": "allow_once"}

    def call(name: str, arguments: dict[str, Any]) -> CallParams:
        return CallParams(name=name, arguments=arguments, session="s")

    caller = Caller(client="tests", elicit=elicit)
    try:
        assert not (
            await runtime.call(call("read_file", {"path": "notes.md"}), caller=caller)
        ).is_error
        unattended = await runtime.call(call("edit_file", EDIT), caller=NOBODY)
        assert unattended.error is not None and unattended.error.code == PERMISSION_UNATTENDED
        assert asked == []
        assert not (await runtime.call(call("edit_file", EDIT), caller=caller)).is_error
        assert len(asked) == 1 and "line 2" in asked[0]
        nested_edit = {"path": "notes.md", "edits": [{"old_string": "three", "new_string": "3"}]}
        capability = {"action": "call", "id": "tool:multi_edit", "arguments": nested_edit}
        result = await runtime.call(call("use_capability", capability), caller=caller)
        assert not result.is_error, result
        assert len(asked) == 2
        assert (root / "notes.md").read_text() == "line one\nline 2\nline 3\n"
    finally:
        await opened.lifecycle.shutdown()
