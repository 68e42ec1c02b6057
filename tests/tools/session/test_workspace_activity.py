"""workspace:activity and toolhost/status's sessions: who works in the workspace, the calls
in flight, the files each session changed; reached through use_capability, so the core
surface (and its hash) stays as it was."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from lsp_server.protocol import CallParams
from lsp_server.runtime.context import Caller
from lsp_server.runtime.dispatch import Runtime
from tests.helpers import call_tool, make_runtime, text_of


async def _edit(runtime: Runtime, session: str, agent: str, path: str) -> None:
    caller = Caller(client=agent)
    for name, args in (
        ("read_file", {"path": path}),
        ("edit_file", {"path": path, "old_string": "one", "new_string": "two"}),
    ):
        params = CallParams(name=name, arguments=args, session=session)
        result = await runtime.call(params, caller=caller)
        assert result.error is None, text_of(result)


async def _activity(runtime: Runtime, session: str) -> str:
    result = await call_tool(
        runtime,
        "use_capability",
        {"action": "call", "id": "workspace:activity", "arguments": {"minutes": 5}},
        session=session,
    )
    assert result.error is None, text_of(result)
    return text_of(result)


async def test_activity_names_sessions_their_agents_calls_and_files(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\n")
    (tmp_path / "g.txt").write_text("one\n")
    os.mkfifo(tmp_path / "gate")
    first = make_runtime(tmp_path)
    second = make_runtime(tmp_path)  # a second server on the same folder
    await _edit(first, "codex-1", "codex", "f.txt")
    await _edit(second, "claude-1", "claude-code", "g.txt")
    # A call in flight: a command that waits for the test to open the gate.
    waiting = asyncio.ensure_future(
        call_tool(first, "bash", {"command": "cat gate"}, session="codex-1")
    )
    codex = first.sessions.get("codex-1")
    for _ in range(2000):
        if any(tool == "bash" for tool, _ in codex.in_flight.values()):
            break
        await asyncio.sleep(0.005)
    text = await _activity(first, "observer")
    status = codex.status()
    with (tmp_path / "gate").open("w") as gate:
        gate.write("done\n")
    assert (await waiting).error is None
    assert "codex-1 (codex): " in text and "running: bash for " in text
    assert "f.txt (edit_file, " in text
    assert "claude-1 (claude-code)" in text and "g.txt (edit_file, " in text
    assert "observer (you)" in text
    assert status["agent"] == "codex" and status["inFlight"][0]["tool"] == "bash"
    assert status["changedFiles"] == [str(tmp_path / "f.txt")]
    assert not codex.in_flight  # the call ended


async def test_activity_is_listed_but_the_core_surface_is_unchanged(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    listed = await call_tool(runtime, "use_capability", {"action": "list"})
    assert "workspace:activity (read-only): Who is working in this workspace now" in text_of(listed)
    assert "workspace:activity" not in str(runtime.registry.surface("core"))
