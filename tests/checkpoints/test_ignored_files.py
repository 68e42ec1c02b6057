"""Ignored files are checkpointed within a budget (issue 27): a sandboxed `rm data.local`
where .gitignore names `*.local` is reverted; regenerable folders are left out; what could
not be recorded is named in the command's result."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.checkpoints.snapshots import changes, checkpoints, revert
from tests.helpers import lsp_call, lsp_session, text_of

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

SETTINGS = {"policy": {"mode": "bypass"}, "checkpoints": {"ignored_budget_mb": 1}}


def make_repo(root: Path) -> None:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("*.local\n*.db\nnode_modules/\nnotes/\n")
    (root / "data.local").write_text("my local settings\n")
    (root / "notes").mkdir()
    (root / "notes" / "todo.md").write_text("- ship it\n")
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    (root / "big.db").write_bytes(b"\0" * (2 * 1024 * 1024))  # over the 1 MB budget
    (root / "tracked.txt").write_text("tracked\n")


async def test_ignored_files_are_reverted_and_the_unrecordable_is_named(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_repo(root)
    async with lsp_session(root, SETTINGS) as client:
        command = "rm data.local big.db notes/todo.md node_modules/left-pad/index.js tracked.txt"
        result = await lsp_call(client, "bash", {"command": command}, callId="c-rm")
        assert not result["isError"], text_of(result)
        text = text_of(result)
        assert (
            "big.db (ignored, 2.0 MB, over the budget) was deleted and cannot be reverted" in text
        )
        assert "data.local" not in text and "node_modules" not in text
        listed = await checkpoints(client)
        assert [c["callId"] for c in listed] == ["c-rm"]
        assert changes(listed[0]) == {
            ("deleted", "data.local", None),
            ("deleted", "notes/todo.md", None),
            ("deleted", "tracked.txt", None),
        }
        outcome = await revert(client, "c-rm")
        assert outcome["conflicts"] == []
    assert (root / "data.local").read_text() == "my local settings\n"
    assert (root / "notes" / "todo.md").read_text() == "- ship it\n"
    assert (root / "tracked.txt").read_text() == "tracked\n"
    assert not (root / "big.db").exists()
    assert not (root / "node_modules" / "left-pad" / "index.js").exists()


async def test_an_ignored_file_created_over_the_size_limit_is_named(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_repo(root)
    settings = {**SETTINGS, "checkpoints": {"ignored_budget_mb": 64, "max_file_bytes": 4096}}
    async with lsp_session(root, settings) as client:
        command = "head -c 10000 /dev/zero > dump.db && echo changed > data.local"
        result = await lsp_call(client, "bash", {"command": command}, callId="c-make")
        text = text_of(result)
        assert (
            "dump.db (ignored, 9.8 KB, over the size limit) was created and is not recorded" in text
        )
        listed = await checkpoints(client)
        assert changes(listed[0]) == {("modified", "data.local", None)}
        assert (await revert(client, "c-make"))["conflicts"] == []
    assert (root / "data.local").read_text() == "my local settings\n"
