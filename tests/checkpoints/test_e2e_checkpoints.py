"""Checkpoints over the wire: `toolhost serve` as a subprocess, real git, real files."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from tests.checkpoints.snapshots import changes, checkpoints, git_folder_state, revert, tree_state
from tests.helpers import lsp_call, lsp_session, text_of

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

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


def make_repository(root: Path) -> None:
    make_files(root)
    git(root, "init", "-q")
    git(root, "config", "user.email", "user@example.invalid")
    git(root, "config", "user.name", "User")
    (root / ".gitignore").write_text("build/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    (root / "notes.txt").write_text("staged change\n")
    git(root, "add", "notes.txt")  # the user's index differs from HEAD: it must stay so
    for hook in ("pre-commit", "post-commit", "post-index-change", "reference-transaction"):
        script = root / ".git" / "hooks" / hook
        script.write_text(f'#!/bin/sh\necho {hook} >> "$GIT_DIR/../hook-ran"\n')
        script.chmod(0o755)


async def test_the_users_git_folder_is_untouched_by_twenty_checkpoints_and_three_reverts(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    make_repository(root)
    git_before = git_folder_state(root)
    status_before = git(root, "status", "--porcelain")
    async with lsp_session(root, BYPASS) as client:
        for n in range(10):
            await lsp_call(
                client, "bash", {"command": f"echo {n} > file{n}.txt"}, callId=f"c-bash{n}"
            )
            await lsp_call(
                client, "write_file", {"path": f"w{n}.txt", "content": f"{n}\n"}, callId=f"c-w{n}"
            )
        (root / "build").mkdir()
        await lsp_call(client, "bash", {"command": "echo ignored > build/out"}, callId="c-ign")
        listed = await checkpoints(client, limit=100)
        assert {c["callId"] for c in listed} == {f"c-bash{n}" for n in range(10)} | {
            f"c-w{n}" for n in range(10)
        }
        for call_id in ("c-bash3", "c-w5", "c-bash9"):
            outcome = await revert(client, call_id)
            assert outcome["conflicts"] == [] and len(outcome["reverted"]) == 1
    assert not (root / "file3.txt").exists() and not (root / "w5.txt").exists()
    assert not (root / "hook-ran").exists()
    assert git_folder_state(root) == git_before
    assert git(root, "status", "--porcelain") != status_before  # the workspace did change ...
    assert git(root, "diff", "--cached", "--name-only") == "notes.txt\n"  # ... not the index


async def test_a_background_jobs_changes_are_recorded_when_it_ends_or_is_killed(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    async with lsp_session(root, BYPASS) as client:
        started = await lsp_call(
            client,
            "bash",
            {"command": "echo done > finished.txt", "run_in_background": True},
            callId="c-bg-ends",
        )
        assert not started["isError"], text_of(started)
        ended = await lsp_call(
            client, "job_output", {"job_id": "bash-1", "wait": True, "timeout_ms": 20_000}
        )
        assert "[status: exited 0]" in text_of(ended), text_of(ended)
        killed = await lsp_call(
            client,
            "bash",
            {"command": "echo partial > killed.txt; exec sleep 60", "run_in_background": True},
            callId="c-bg-killed",
        )
        assert not killed["isError"], text_of(killed)
        while not (root / "killed.txt").exists():
            await asyncio.sleep(0.05)
        await lsp_call(client, "job_kill", {"job_id": "bash-2"})
        by_id = {c["callId"]: changes(c) for c in await checkpoints(client)}
        assert by_id == {
            "c-bg-ends": {("created", "finished.txt", None)},
            "c-bg-killed": {("created", "killed.txt", None)},
        }
        outcome = await revert(client, "c-bg-killed")
        assert outcome["reverted"] == ["killed.txt"] and not (root / "killed.txt").exists()


async def test_a_repository_of_ten_thousand_files(tmp_path: Path) -> None:
    root = tmp_path / "big"
    for d in range(100):
        folder = root / f"pkg{d}"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"m{f}.py").write_text(f"VALUE = {d * 100 + f}\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.email=u@example.invalid", "-c", "user.name=U", "commit", "-qm", "x")
    async with lsp_session(root, BYPASS) as client:
        command = "sed -i 's/VALUE = 4242/VALUE = 0/' pkg42/m42.py && rm pkg7/m7.py"
        result = await lsp_call(client, "bash", {"command": command}, callId="c-big")
        assert not result["isError"], text_of(result)
        [listed] = await checkpoints(client)
        assert changes(listed) == {
            ("modified", "pkg42/m42.py", None),
            ("deleted", "pkg7/m7.py", None),
        }
        outcome = await revert(client, "c-big")
        assert outcome["conflicts"] == []
    assert (root / "pkg42" / "m42.py").read_text() == "VALUE = 4242\n"
    assert (root / "pkg7" / "m7.py").read_text() == "VALUE = 707\n"
    assert git(root, "status", "--porcelain") == ""


async def test_writers_moves_and_creations_are_reverted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_bytes(b"caf\xe9\r\n")  # latin-1 with CRLF: bytes must come back
    before = tree_state(root)
    async with lsp_session(root, BYPASS) as client:
        await lsp_call(client, "read_file", {"path": "a.txt"})
        moved = await lsp_call(
            client,
            "move_file",
            {"source_path": "a.txt", "destination_path": "b/a.txt"},
            callId="c-mv",
        )
        assert not moved["isError"], text_of(moved)
        made = await lsp_call(
            client, "write_file", {"path": "new.txt", "content": "x\n"}, callId="c-new"
        )
        assert not made["isError"], text_of(made)
        by_id = {c["callId"]: changes(c) for c in await checkpoints(client)}
        assert by_id == {
            "c-mv": {("moved", "b/a.txt", "a.txt")},
            "c-new": {("created", "new.txt", None)},
        }
        assert (await revert(client, "c-new"))["reverted"] == ["new.txt"]
        assert (await revert(client, "c-mv"))["conflicts"] == []
    assert tree_state(root) == before
