"""One agent's changes as one diff, and all of them reverted at once, leaving another
agent's changes byte for byte: two real servers on one folder, each with its own editor
(agent) name, and the same from the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.checkpoints.snapshots import checkpoints
from tests.helpers import lsp_call, lsp_session, text_of

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

BYPASS = {"policy": {"mode": "bypass"}}


async def call(client: Any, session: str, tool: str, arguments: dict[str, Any]) -> None:
    result = await lsp_call(client, tool, arguments, session=session)
    assert not result["isError"], text_of(result)


def toolhost(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI on `root`, with the state folder its test servers use (lsp_session)."""
    command = [sys.executable, "-m", "lsp_server", *args, "--root", str(root)]
    env = {**os.environ, "TOOLHOST_STATE_DIR": str(root.parent / f".{root.name}-state")}
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env)


async def two_agents_work(root: Path) -> None:
    one = types.ClientInfo(name="agent-one")
    two = types.ClientInfo(name="agent-two")
    async with (
        lsp_session(root, BYPASS, client_info=one) as first,
        lsp_session(root, BYPASS, client_info=two) as second,
    ):
        await call(first, "A", "write_file", {"path": "new.txt", "content": "by A\n"})
        await call(second, "B", "read_file", {"path": "shared.txt"})
        await call(
            second,
            "B",
            "edit_file",
            {"path": "shared.txt", "old_string": "line 3", "new_string": "line 3 by B"},
        )
        await call(first, "A", "bash", {"command": "echo 'more by A' >> new.txt && rm gone.txt"})
        await call(first, "A", "read_file", {"path": "shared.txt"})
        await call(
            first,
            "A",
            "edit_file",
            {"path": "shared.txt", "old_string": "line 1", "new_string": "line 1 by A"},
        )
        await call(second, "B", "bash", {"command": "echo 'by B' > b.txt"})

        listed = await checkpoints(first)
        agents = {(c["session"], c.get("agent")) for c in listed}
        assert agents == {("A", "agent-one"), ("B", "agent-two")}

        review = await first.protocol.send_request_async(
            "toolhost/sessionChanges", {"session": "A"}
        )
        assert review["agent"] == "agent-one" and len(review["calls"]) == 3
        assert {(f["path"], f["change"]) for f in review["files"]} == {
            ("new.txt", "created"),
            ("gone.txt", "deleted"),
            ("shared.txt", "modified"),
        }
        diff = review["diff"]
        assert "+by A\n+more by A\n" in diff and "-line 1\n+line 1 by A\n" in diff
        assert "+line 3 by B" not in diff  # B's line is context in A's diff, not A's change
        assert "b.txt" not in diff

        undone = await second.protocol.send_request_async(
            "toolhost/revertSession", {"session": "A", "by": "user"}
        )
        assert undone["conflicts"] == [], undone["text"]
        assert len(undone["calls"]) == 3 and "Reverted 3 call(s) of session A" in undone["text"]


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "shared.txt").write_text("line 1\nline 2\nline 3\n")
    (root / "gone.txt").write_text("to be removed\n")
    return root


async def test_an_agents_changes_are_reviewed_as_one_diff_and_reverted_alone(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    await two_agents_work(root)
    # A's every change is undone; B's stay byte for byte.
    assert not (root / "new.txt").exists()
    assert (root / "gone.txt").read_text() == "to be removed\n"
    assert (root / "shared.txt").read_text() == "line 1\nline 2\nline 3 by B\n"
    assert (root / "b.txt").read_text() == "by B\n"


async def test_the_command_line_reviews_and_reverts_a_session(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    one = types.ClientInfo(name="agent-one")
    async with lsp_session(root, BYPASS, client_info=one) as first:
        await call(first, "A", "write_file", {"path": "new.txt", "content": "by A\n"})
        await call(first, "B", "bash", {"command": "echo 'by B' > b.txt"})
    listed = toolhost(root, "checkpoints")
    assert "[A: agent-one]" in listed.stdout and "toolhost revert --session S" in listed.stdout
    review = toolhost(root, "checkpoints", "--session", "A", "--diff")
    assert review.returncode == 0, review.stderr
    assert "session A (agent-one) changed 1 file(s) in 1 call(s)." in review.stdout
    assert "+++ b/new.txt\n" in review.stdout and "b.txt" not in review.stdout
    as_json = json.loads(toolhost(root, "checkpoints", "--session", "A", "--diff", "--json").stdout)
    assert [(f["path"], f["change"]) for f in as_json["files"]] == [("new.txt", "created")]
    both = toolhost(root, "revert", "c-1", "--session", "A")
    assert both.returncode == 2 and "one of them" in both.stderr
    undone = toolhost(root, "revert", "--session", "A")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert "Reverted 1 call(s) of session A" in undone.stdout
    assert not (root / "new.txt").exists() and (root / "b.txt").read_text() == "by B\n"
