"""The git guard across sessions: a git command that would discard uncommitted changes asks
even in bypass mode (where it would otherwise run unasked), and the question names the
session whose changes it would drop, with the file; approved, it runs, and the changes it
dropped stay revertable from its own checkpoint."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.compose import build_runtime
from lsp_server.config.tree import Config, structure_config
from lsp_server.home.dirs import Dirs
from lsp_server.policy.commands.git_discards import Discard, discards
from lsp_server.protocol import ApproveParams, CallParams, RevertParams
from lsp_server.runtime.context import Caller
from lsp_server.runtime.dispatch import Runtime
from lsp_server.runtime.file_service import FileService
from lsp_server.runtime.reverts import revert_request
from lsp_server.runtime.sessions.observations import Observations
from tests.helpers import text_of

pytestmark = pytest.mark.timeout(120)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def repository(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "start")
    return root


def runtime_asking(root: Path, tmp_path: Path, questions: list[ApproveParams]) -> Runtime:
    problems: list[str] = []
    config = structure_config(
        {"policy": {"mode": "bypass"}, "shell": {"sandbox": "off"}}, problems, Config()
    )

    async def allow(request: ApproveParams) -> dict[str, Any]:
        questions.append(request)
        return {"decision": "allow_once"}

    dirs = Dirs(state=tmp_path / "state", config=tmp_path / "config")
    runtime, _ = build_runtime([root], config, dirs=dirs, asker=allow, long_lived=False)
    return runtime


async def call(runtime: Runtime, session: str, agent: str, name: str, **args: Any) -> str:
    params = CallParams(name=name, arguments=args, session=session, call_id=f"{session}-{name}")
    result = await runtime.call(params, caller=Caller(client=agent))
    assert result.error is None, text_of(result)
    return text_of(result)


async def test_checkout_asks_naming_the_other_session_and_its_file(tmp_path: Path) -> None:
    root = repository(tmp_path)
    questions: list[ApproveParams] = []
    runtime = runtime_asking(root, tmp_path, questions)
    await call(runtime, "codex-1", "codex", "read_file", path="a.txt")
    await call(
        runtime, "codex-1", "codex", "edit_file", path="a.txt", old_string="a", new_string="A"
    )
    await call(runtime, "codex-1", "codex", "bash", command="echo more >> b.txt")
    assert questions == []  # bypass mode: the edit and the command ran unasked
    await call(runtime, "claude-1", "claude-code", "bash", command="git status --short")
    assert questions == []  # a read: no question
    await call(runtime, "claude-1", "claude-code", "bash", command="git checkout -- .")
    [asked] = questions
    question = asked.title + "\n" + asked.summary
    assert "`git checkout -- .` would discard the uncommitted changes of session codex-1 " in (
        question
    )
    assert (
        "(codex)" in question
        and "a.txt (last changed by session codex-1 (codex) (edit_file" in (question)
    )
    # A command's change is named by its checkpoint's session and the command.
    assert "b.txt (last changed by session codex-1 (codex) (bash `echo more >> b.txt`" in (question)
    assert (root / "a.txt").read_text() == "a\n"  # approved, it ran
    # The change it dropped comes back from the command's own checkpoint.
    files = FileService(runtime.workspace, Observations(), runtime.config.limits, None)
    checkpoints = runtime.services.get(Checkpoints)
    outcome = await revert_request(
        checkpoints, files, runtime.locks, RevertParams(call_id="claude-1-bash")
    )
    assert outcome.conflicts == [], outcome.text
    assert (root / "a.txt").read_text() == "A\n"
    assert (root / "b.txt").read_text() == "b\nmore\n"


async def test_a_clean_tree_or_a_read_does_not_ask(tmp_path: Path) -> None:
    root = repository(tmp_path)
    questions: list[ApproveParams] = []
    runtime = runtime_asking(root, tmp_path, questions)
    await call(runtime, "claude-1", "claude-code", "bash", command="git stash list")
    await call(runtime, "claude-1", "claude-code", "bash", command="git reset --hard")
    assert questions == []  # nothing uncommitted to drop
    (root / "c.txt").write_text("untracked\n")  # by a program, not a session
    await call(runtime, "claude-1", "claude-code", "bash", command="git clean -fd")
    [asked] = questions
    assert "c.txt (last changed by no toolhost session (the user or a program))" in asked.summary
    git(root, "branch", "other")
    (root / "b.txt").write_text("changed\n")
    await call(runtime, "claude-1", "claude-code", "bash", command="git switch other")
    switched = questions[-1].summary
    assert "`git switch other` switches branches with the uncommitted changes in 1 file" in (
        switched
    )
    assert "forced, they would be lost" in switched


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git stash", Discard("tracked")),
        ("git stash -u", Discard("both")),
        ("git stash list", None),
        ("git stash pop", None),
        ("git checkout -- src", Discard("tracked", ("src",))),
        ("git checkout .", Discard("tracked", (".",))),
        ("git checkout -b topic", None),
        ("git checkout main", Discard("tracked", switch=True)),
        ("git checkout -f main", Discard("tracked")),
        ("git restore a.txt", Discard("tracked", ("a.txt",))),
        ("git restore --staged a.txt", None),
        ("git reset --hard HEAD", Discard("tracked")),
        ("git reset HEAD~1", None),
        ("git clean -fd", Discard("untracked")),
        ("git clean -n", None),
        ("git clean -fdn", None),
        ("git switch main", Discard("tracked", switch=True)),
        ("git switch --discard-changes main", Discard("tracked")),
        ("git switch -c new", None),
        ("git -C . stash push -- a.txt", Discard("tracked", ("a.txt",))),
        ("git log", None),
    ],
)
def test_which_git_commands_discard(tmp_path: Path, command: str, expected: object) -> None:
    assert discards(command.split(), tmp_path) == expected


async def test_over_mcp_claude_is_asked_before_dropping_codexs_edit(tmp_path: Path) -> None:
    """The acceptance scenario on the MCP face: two real `toolhost mcp` processes on one
    folder, one per agent, in bypass mode. Codex's edit runs unasked; Claude Code's
    `git checkout -- .` asks through its client's form, naming Codex and the file."""
    import os

    import mcp_types

    from tests.mcp.clients import mcp_session
    from tests.mcp.clients import text_of as mcp_text

    root = repository(tmp_path)
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "toolhost"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text('[policy]\nmode = "bypass"\n', encoding="utf-8")
    forms: list[str] = []

    async def allow(context: Any, params: Any) -> Any:
        forms.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"decision": "allow_once"})

    async with (
        mcp_session(
            root, "--session", "codex-1", name="codex", elicitation_callback=allow
        ) as codex,
        mcp_session(root, name="claude-code", elicitation_callback=allow) as claude,
    ):
        await codex.call_tool("read_file", {"path": "a.txt"})
        edited = await codex.call_tool(
            "edit_file", {"path": "a.txt", "old_string": "a", "new_string": "A"}
        )
        assert edited.is_error is False, mcp_text(edited)
        assert forms == []
        # Out of the sandbox, which keeps .git read-only (that alone would ask too).
        command = {"command": "git checkout -- .", "sandbox": "off"}
        dropped = await claude.call_tool("bash", command)
    assert dropped.is_error is False, mcp_text(dropped)
    [form] = forms
    assert "would discard the uncommitted changes of session codex-1 (codex)" in form
    assert "a.txt (last changed by session codex-1 (codex) (edit_file" in form
    assert (root / "a.txt").read_text() == "a\n", mcp_text(dropped)
