"""Checkpoints over the wire: `toolhost serve` as a subprocess, real git, real files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.checkpoints.snapshots import changes, checkpoints, revert, tree_state
from tests.helpers import lsp_call, lsp_session, text_of

pytestmark = pytest.mark.timeout(180)

BYPASS = {"policy": {"mode": "bypass"}}
BINARY = bytes(range(256)) * 4


def make_files(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "gone.sh").write_text("#!/bin/sh\necho gone\n")
    (root / "gone.sh").chmod(0o755)
    (root / "image.bin").write_bytes(BINARY)
    (root / "notes.txt").write_bytes(b"line one\r\nline two\r\n")
    (root / "old name.txt").write_text("I move\n")
    (root / "sub").mkdir()
    (root / "sub" / "keep.txt").write_text("untouched\n")


async def test_a_bash_call_is_listed_with_exactly_its_changes_and_reverted_byte_for_byte(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plain"  # not a git repository
    make_files(root)
    before = tree_state(root)
    async with lsp_session(root, BYPASS) as client:
        command = (
            "rm gone.sh image.bin && echo fresh > sub/new.txt && "
            "printf 'line one\\r\\nline 2\\r\\n' > notes.txt && mv 'old name.txt' renamed.txt"
        )
        result = await lsp_call(client, "bash", {"command": command}, callId="c-bash")
        assert not result["isError"], text_of(result)
        listed = await checkpoints(client)
        assert [c["callId"] for c in listed] == ["c-bash"]
        assert listed[0]["tool"] == "bash" and listed[0]["label"] == command
        assert changes(listed[0]) == {
            ("deleted", "gone.sh", None),
            ("deleted", "image.bin", None),
            ("created", "sub/new.txt", None),
            ("modified", "notes.txt", None),
            ("moved", "renamed.txt", "old name.txt"),
        }
        outcome = await revert(client, "c-bash")
        assert outcome["conflicts"] == []
        assert sorted(outcome["reverted"]) == sorted(
            ["gone.sh", "image.bin", "sub/new.txt", "notes.txt", "renamed.txt", "old name.txt"]
        )
        assert tree_state(root) == before
        # The revert is a checkpoint of its own: undoing it brings the call's result back.
        assert outcome["checkpoint"]
        listed = await checkpoints(client)
        assert listed[0]["callId"] == outcome["checkpoint"]
        assert listed[0]["reverts"] == "c-bash"
        again = await revert(client, outcome["checkpoint"])
        assert again["conflicts"] == []
        assert not (root / "gone.sh").exists() and (root / "renamed.txt").read_text() == "I move\n"
        assert (root / "notes.txt").read_bytes() == b"line one\r\nline 2\r\n"


async def test_read_only_commands_make_no_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "ro"
    make_files(root)
    async with lsp_session(root, BYPASS) as client:
        await lsp_call(client, "bash", {"command": "cat notes.txt && ls"}, callId="c-ro")
        await lsp_call(client, "bash", {"command": "touch made.txt"}, callId="c-rw")
        assert [c["callId"] for c in await checkpoints(client)] == ["c-rw"]


async def test_revert_of_an_edit_refuses_over_a_later_change_and_keeps_it(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "app.py"
    target.write_text("def main():\n    return 1\n\n\nprint(main())\n")
    async with lsp_session(root, BYPASS) as client:
        await lsp_call(client, "read_file", {"path": "app.py"})
        edit = {"path": "app.py", "old_string": "return 1", "new_string": "return 2"}
        result = await lsp_call(client, "edit_file", edit, callId="c-edit")
        assert not result["isError"], text_of(result)
        assert changes((await checkpoints(client))[0]) == {("modified", "app.py", None)}
        users = "def main():\n    return 3  # the user's fix\n\n\nprint(main())\n"
        target.write_text(users)
        outcome = await revert(client, "c-edit")
        assert outcome["reverted"] == []
        [conflict] = outcome["conflicts"]
        assert conflict["path"] == "app.py"
        assert (
            "-    return 2" in conflict["diff"]
            and "+    return 3  # the user's fix" in conflict["diff"]
        )
        assert target.read_text() == users
        assert outcome["checkpoint"] is None


async def test_revert_of_an_edit_keeps_later_changes_elsewhere_in_the_file(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    target = root / "app.py"
    target.write_text("a = 1\n\n\n\n\nb = 2\n")
    async with lsp_session(root, BYPASS) as client:
        await lsp_call(client, "read_file", {"path": "app.py"})
        edit = {"path": "app.py", "old_string": "a = 1", "new_string": "a = 100"}
        await lsp_call(client, "edit_file", edit, callId="c-edit")
        target.write_text("a = 100\n\n\n\n\nb = 2\nc = 3\n")
        outcome = await revert(client, "c-edit")
        assert outcome["conflicts"] == [] and outcome["reverted"] == ["app.py"]
        assert target.read_text() == "a = 1\n\n\n\n\nb = 2\nc = 3\n"


async def test_revert_of_an_unknown_call_is_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    async with lsp_session(root, BYPASS) as client:
        with pytest.raises(Exception, match="no checkpoint of a call 'c-nope'") as caught:
            await revert(client, "c-nope")
        assert "toolhost/checkpoints" in str(caught.value)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout
