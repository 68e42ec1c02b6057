"""An editor session named in `sessions.isolated` (VS Code's agent mode calls as
`vscode-lm`) works in a git worktree of the live tree, over the real `toolhost serve`;
the editor's other sessions keep working in the folder, its job view still finds the
isolated session's jobs, and workspace:apply brings the change back
(server/isolated_sessions.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.acp.test_isolate import git, repository
from tests.helpers import lsp_call, lsp_session, text_of

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
ISOLATED = {"policy": {"mode": "bypass"}, "sessions": {"isolated": ["vscode-lm"]}}


async def test_an_isolated_editor_session_works_in_a_worktree_until_it_applies(
    tmp_path: Path,
) -> None:
    root = repository(tmp_path)
    async with lsp_session(root, ISOLATED) as client:
        read = await lsp_call(client, "read_file", {"path": "notes.md"}, session="vscode-lm")
        assert not read["isError"], text_of(read)
        assert "not committed" in text_of(read)  # the live tree, not HEAD
        found = re.search(r"isolated: you work in (\S+?),? ", text_of(read))
        assert found, text_of(read)
        tree = Path(found.group(1).rstrip(",."))
        assert tree != root and str(tree) in git(root, "worktree", "list")

        wrote = await lsp_call(
            client, "write_file", {"path": "made.md", "content": "agent\n"}, session="vscode-lm"
        )
        assert not wrote["isError"], text_of(wrote)
        ran = await lsp_call(client, "bash", {"command": "pwd"}, session="vscode-lm")
        assert text_of(ran).splitlines()[0] == str(tree)
        job = await lsp_call(
            client,
            "bash",
            {"command": "echo job > job.md", "run_in_background": True},
            session="vscode-lm",
        )
        job_id = re.search(r'"(bash-\d+)"', text_of(job))
        assert job_id, text_of(job)

        # The editor's own sessions work in the folder as before.
        mine = await lsp_call(
            client, "write_file", {"path": "mine.md", "content": "user\n"}, session="vscode"
        )
        assert not mine["isError"], text_of(mine)
        assert (root / "mine.md").exists() and not (tree / "mine.md").exists()
        assert (tree / "made.md").exists() and not (root / "made.md").exists()

        # The job view asks under a session of its own, by the job's id alone.
        output = await lsp_call(
            client,
            "job_output",
            {"job_id": job_id.group(1), "wait": True, "timeout_ms": 30_000},
            session="vscode-jobs",
        )
        assert not output["isError"], text_of(output)
        assert "[status: exited 0]" in text_of(output)
        assert (tree / "job.md").read_text() == "job\n" and not (root / "job.md").exists()

        apply = {"action": "call", "id": "workspace:apply", "arguments": {}}
        applied = await lsp_call(client, "use_capability", apply, session="vscode-lm")
        assert not applied["isError"], text_of(applied)
        assert (root / "made.md").read_text() == "agent\n"
        assert (root / "job.md").read_text() == "job\n"
        assert (root / "notes.md").read_text() == "# Notes\n\nline three, not committed\n"
        # The folder's sessions see who changed those files: the isolated session's apply.
        who = {"action": "call", "id": "workspace:activity", "arguments": {"minutes": 5}}
        activity = text_of(await lsp_call(client, "use_capability", who, session="vscode"))
        others = activity.split("Other sessions that changed files", 1)[1]
        assert others.split("\n")[1].strip().startswith("vscode-lm ("), activity
        assert "made.md (workspace:apply" in others, activity


async def test_an_isolated_session_outside_git_is_refused_with_a_reason(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    async with lsp_session(root, ISOLATED) as client:
        refused = await lsp_call(
            client, "write_file", {"path": "x.md", "content": "x\n"}, session="vscode-lm"
        )
        assert refused["isError"], refused
        assert refused["error"]["code"] == "workspace.isolation_failed", refused
        assert "not in a git repository with a commit" in refused["error"]["message"]
        assert not (root / "x.md").exists()
