"""`toolhost mcp --isolate`: a session of its own in a git worktree made from the live tree,
driven by the MCP SDK's client; its change comes back through workspace:apply, merged
three-way, asked as one diff through the client's form, undone by `toolhost revert`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.mcp.clients import mcp_session, text_of

pytestmark = pytest.mark.timeout(240)

LINES = "".join(f"line {n}\n" for n in range(1, 11))


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "shared.txt").write_text(LINES)
    (root / "gone.txt").write_text("to be deleted\n")
    (root / ".gitignore").write_text("*.log\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    # The live tree: an uncommitted edit, an untracked file, a deletion, an ignored file.
    (root / "shared.txt").write_text(LINES.replace("line 1\n", "line 1 uncommitted\n"))
    (root / "untracked.txt").write_text("not in HEAD\n")
    (root / "gone.txt").unlink()
    (root / "build.log").write_text("ignored\n")
    return root


def worktree_root(state: Path) -> Path:
    """The worktree, from the record in the state folder (one per test: its own state)."""
    [record] = (state / "worktrees").glob("*.json")
    return Path(json.loads(record.read_text())["top"])


def answering(asked: list[Any]) -> Any:
    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"decision": "allow_once"})

    return callback


def toolhost(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_server", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )


async def apply(session: Any) -> str:
    result = await session.call_tool(
        "use_capability", {"action": "call", "id": "workspace:apply", "arguments": {}}
    )
    assert result.is_error is False, text_of(result)
    return text_of(result)


async def test_isolated_session_works_apart_and_applies_as_one_diff(tmp_path: Path) -> None:
    root = repository(tmp_path)
    state = Path(os.environ["TOOLHOST_STATE_DIR"])
    asked: list[Any] = []
    async with mcp_session(root, "--isolate", elicitation_callback=answering(asked)) as session:
        tree = worktree_root(state)
        # The worktree is the live tree: HEAD plus the uncommitted edit, the untracked file
        # and the deletion; ignored files stay behind.
        assert (tree / "shared.txt").read_text().startswith("line 1 uncommitted\n")
        assert (tree / "untracked.txt").read_text() == "not in HEAD\n"
        assert not (tree / "gone.txt").exists() and not (tree / "build.log").exists()
        assert str(tree) in git(root, "worktree", "list")

        # The agent's edit and command change only the worktree.
        read = await session.call_tool("read_file", {"path": "shared.txt"})
        assert read.is_error is False, text_of(read)
        # The first result tells the agent where it works and how its change gets back.
        assert "isolated: you work in" in text_of(read) and "workspace:apply" in text_of(read)
        edit = {"path": "shared.txt", "old_string": "line 9\n", "new_string": "line 9 agent\n"}
        edited = await session.call_tool("edit_file", edit)
        assert edited.is_error is False, text_of(edited)
        command = "echo made > made.txt && printf x > run.sh && chmod +x run.sh && pwd"
        ran = await session.call_tool("bash", {"command": command})
        assert ran.is_error is False, text_of(ran)
        assert (tree / "made.txt").read_text() == "made\n" and str(tree) in text_of(ran)
        assert "line 9 agent" not in (root / "shared.txt").read_text()
        assert not (root / "made.txt").exists()

        # Meanwhile another writer changes another line of the same file in the root.
        live = (root / "shared.txt").read_text().replace("line 3\n", "line 3 user\n")
        (root / "shared.txt").write_text(live)

        asked.clear()
        applied = await apply(session)
        [form] = asked  # one question, with one diff of both files
        assert "+line 9 agent" in form.message and "made.txt" in form.message, form.message
        merged = (root / "shared.txt").read_text()
        assert "line 1 uncommitted\n" in merged and "line 3 user\n" in merged
        assert "line 9 agent\n" in merged
        assert (root / "made.txt").read_text() == "made\n"
        assert os.access(root / "run.sh", os.X_OK)  # its mode came along
        assert not (root / "gone.txt").exists()  # the deletion was already live: kept
        assert (root / "untracked.txt").read_text() == "not in HEAD\n"
        call_id = applied.split("checkpoint ")[1].split(")")[0]

        # An overlapping change is listed as a conflict; the root keeps its text.
        (root / "shared.txt").write_text(merged.replace("line 5\n", "line 5 user\n"))
        edit = {"path": "shared.txt", "old_string": "line 5\n", "new_string": "line 5 agent\n"}
        await session.call_tool("read_file", {"path": "shared.txt"})
        edited = await session.call_tool("edit_file", edit)
        assert edited.is_error is False, text_of(edited)
        await session.call_tool("bash", {"command": "echo newer > newer.txt"})
        asked.clear()
        second = await apply(session)
        assert "left out" in second and "shared.txt" in second.split("left out")[1], second
        assert "line 5 user\n" in (root / "shared.txt").read_text()
        assert "line 5 agent" not in (root / "shared.txt").read_text()
        # Only the newer change came: made.txt is not in the second diff.
        [form] = asked
        assert "newer.txt" in form.message and "made.txt" not in form.message, form.message
        assert (root / "newer.txt").read_text() == "newer\n"

    # The worktree stays after the session (the agent's work survives).
    assert (tree / "made.txt").exists()
    # `toolhost revert` of the first apply's call undoes it in the root.
    reverted = toolhost(root, "revert", call_id)
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    assert not (root / "made.txt").exists()
    assert "line 9 agent" not in (root / "shared.txt").read_text()
    assert "line 5 user\n" in (root / "shared.txt").read_text()  # the user's change stays


async def test_a_denied_apply_changes_nothing_and_comes_again(tmp_path: Path) -> None:
    root = repository(tmp_path)
    before = (root / "shared.txt").read_text()
    answers = ["allow_once", "deny", "allow_once"]  # the edit, the first apply, the second
    asked: list[Any] = []

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"decision": answers.pop(0)})

    async with mcp_session(root, "--isolate", elicitation_callback=callback) as session:
        await session.call_tool("read_file", {"path": "shared.txt"})
        edit = {"path": "shared.txt", "old_string": "line 4\n", "new_string": "line 4 agent\n"}
        edited = await session.call_tool("edit_file", edit)
        assert edited.is_error is False, text_of(edited)
        asked.clear()
        call = {"action": "call", "id": "workspace:apply", "arguments": {}}
        denied = await session.call_tool("use_capability", call)
        assert denied.is_error is True and "not allowed" in text_of(denied), text_of(denied)
        assert (root / "shared.txt").read_text() == before
        applied = await apply(session)  # the same change comes again
        assert "+line 4 agent" in applied and len(asked) == 2
    assert "line 4 agent\n" in (root / "shared.txt").read_text()


async def test_a_file_changed_while_the_apply_is_asked_is_left_out(tmp_path: Path) -> None:
    root = repository(tmp_path)
    asked: list[Any] = []

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        if len(asked) == 2:  # the first apply's question: the user saves meanwhile
            text = (root / "shared.txt").read_text()
            (root / "shared.txt").write_text(text.replace("line 2\n", "line 2 user\n"))
        return types.ElicitResult(action="accept", content={"decision": "allow_once"})

    async with mcp_session(root, "--isolate", elicitation_callback=callback) as session:
        await session.call_tool("read_file", {"path": "shared.txt"})
        edit = {"path": "shared.txt", "old_string": "line 8\n", "new_string": "line 8 agent\n"}
        edited = await session.call_tool("edit_file", edit)
        assert edited.is_error is False, text_of(edited)
        first = await apply(session)
        assert "changed there while the apply was asked" in first, first
        assert "line 8 agent" not in (root / "shared.txt").read_text()
        second = await apply(session)  # merged with the new text now
        assert "+line 8 agent" in second, second
    merged = (root / "shared.txt").read_text()
    assert "line 2 user\n" in merged and "line 8 agent\n" in merged


async def test_apply_outside_an_isolated_session_is_refused(tmp_path: Path) -> None:
    root = repository(tmp_path)
    async with mcp_session(root, "--attach", "never") as session:
        result = await session.call_tool(
            "use_capability", {"action": "call", "id": "workspace:apply", "arguments": {}}
        )
    assert result.is_error is True
    assert "not isolated" in text_of(result), text_of(result)
    assert result.structured_content is not None
    assert result.structured_content["code"] == "workspace.not_isolated"


async def test_apply_with_its_git_data_gone_is_isolation_broken(tmp_path: Path) -> None:
    root = repository(tmp_path)
    state = Path(os.environ["TOOLHOST_STATE_DIR"])
    async with mcp_session(root, "--isolate", elicitation_callback=answering([])) as session:
        # The user pruned the worktree's git data while the session ran.
        record = json.loads(next((state / "worktrees").glob("*.json")).read_text())
        shutil.rmtree(record["gitdir"])
        result = await session.call_tool(
            "use_capability", {"action": "call", "id": "workspace:apply", "arguments": {}}
        )
    assert result.is_error is True, text_of(result)
    assert result.structured_content is not None
    assert result.structured_content["code"] == "workspace.isolation_broken", text_of(result)


def test_isolate_outside_a_repository_is_refused_at_start(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    done = toolhost(plain, "mcp", "--isolate")
    assert done.returncode == 2
    assert "not in a git repository" in done.stderr, done.stderr
    refused = toolhost(plain, "mcp", "--isolate", "--attach", "require")
    assert refused.returncode == 2 and "--attach require" in refused.stderr


async def test_an_isolated_server_over_http_works_apart_and_applies(
    tmp_path: Path, bypass_policy: None
) -> None:
    """`toolhost mcp --http 127.0.0.1:0 --isolate`: the same worktree, over Streamable HTTP."""
    from tests.mcp.http_server import http_mcp
    from tests.mcp.test_http import sdk_session

    root = repository(tmp_path)
    state = Path(os.environ["TOOLHOST_STATE_DIR"])
    async with http_mcp(root, "--isolate") as server, sdk_session(server) as session:
        tree = worktree_root(state)
        wrote = await session.call_tool("write_file", {"path": "made.txt", "content": "x\n"})
        assert wrote.is_error is False, text_of(wrote)
        assert "isolated: you work in" in text_of(wrote)
        assert (tree / "made.txt").exists() and not (root / "made.txt").exists()
        await apply(session)
    assert (root / "made.txt").read_text() == "x\n"
