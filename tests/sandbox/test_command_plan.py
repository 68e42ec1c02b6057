"""One plan per command (issue 27 items 1 and 2): the sandbox enforces what the classifier
guesses, the plan is made once and feeds the policy, the sandbox and the checkpoints, and
a checkpoint that fails is said in the result. Real bubblewrap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_server.checkpoints.recorder import Checkpoints
from lsp_server.compose import build_runtime
from lsp_server.config.tree import Config, structure_config
from lsp_server.home.dirs import Dirs
from lsp_server.policy.planner import CommandPlanner
from lsp_server.protocol import ApproveParams, CallParams
from tests.checkpoints.snapshots import changes, checkpoints, revert
from tests.helpers import call_tool, lsp_call, lsp_session, make_runtime, text_of

pytestmark = pytest.mark.timeout(120)

# A wrong guess, on purpose: the user's own extra read-only spec calls `rm victim.txt` a
# plain read (the same happens when the built-in classifier misreads a command).
WRONG_GUESS = {"policy": {"read_only_commands": ["rm victim.txt"]}}


def planner_of(root: Path, settings: dict[str, Any]) -> CommandPlanner:
    runtime = make_runtime(root, settings)
    planner: CommandPlanner = runtime.services.get(CommandPlanner)
    return planner


def test_the_plan_of_each_kind_of_command(bwrap: str, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    plan = planner_of(root, {}).plan
    read = plan("ls -la", root, {})
    assert read.plain_read and read.runs_read_only
    assert not read.needs_checkpoint and not read.needs_approval and not read.sandbox.proxy
    write = plan("touch x", root, {})
    assert not write.plain_read and write.sandbox.sandboxed and not write.runs_read_only
    assert write.sandbox.mode == "workspace-write" and not write.sandbox.proxy
    assert write.needs_checkpoint and not write.needs_approval
    listed = {"shell": {"sandbox_network_allow": ["pypi.org"]}}
    assert planner_of(root, listed).plan("pip download x", root, {}).sandbox.proxy
    assert not planner_of(root, listed).plan("cat x", root, {}).sandbox.proxy
    network = plan("npm install", root, {"sandbox": "network"})
    assert network.needs_approval and network.sandbox.network and not network.sandbox.proxy
    in_read_only_mode = planner_of(root, {"policy": {"mode": "readOnly"}}).plan("touch x", root, {})
    assert in_read_only_mode.runs_read_only and not in_read_only_mode.needs_checkpoint
    assert not in_read_only_mode.sandbox.proxy and not in_read_only_mode.sandbox.network
    off = planner_of(root, {"shell": {"sandbox": "off"}}).plan
    assert off("ls", root, {}).classifier_alone and off("ls", root, {}).needs_checkpoint
    assert not off("ls", root, {}).needs_approval and off("touch x", root, {}).needs_approval


async def test_a_wrong_guess_cannot_write_in_the_sandbox(bwrap: str, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "victim.txt").write_text("keep me\n")
    runtime = make_runtime(root, WRONG_GUESS)  # an approver that allows all
    result = await call_tool(runtime, "bash", {"command": "rm victim.txt"})
    assert "Read-only file system" in text_of(result)
    assert (root / "victim.txt").read_text() == "keep me\n"


async def test_without_a_sandbox_a_wrong_guess_is_checkpointed_and_reverted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "victim.txt").write_text("keep me\n")
    settings = {**WRONG_GUESS, "shell": {"sandbox": "off"}}
    async with lsp_session(root, settings) as client:
        result = await lsp_call(client, "bash", {"command": "rm victim.txt"}, callId="c-rm")
        assert not result["isError"], text_of(result)  # a plain read: it ran unasked
        assert not (root / "victim.txt").exists()
        listed = await checkpoints(client)
        assert [c["callId"] for c in listed] == ["c-rm"]
        assert changes(listed[0]) == {("deleted", "victim.txt", None)}
        assert (await revert(client, "c-rm"))["conflicts"] == []
    assert (root / "victim.txt").read_text() == "keep me\n"


async def test_one_plan_per_call_shared_by_policy_and_tool(
    bwrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    made: list[str] = []
    original = CommandPlanner._make

    def counting(self: CommandPlanner, command: str, *args: Any) -> Any:
        made.append(command)
        return original(self, command, *args)

    monkeypatch.setattr(CommandPlanner, "_make", counting)
    problems: list[str] = []
    config = structure_config({}, problems, Config())
    prompts: list[str] = []

    async def deny(request: ApproveParams) -> dict[str, Any]:
        prompts.append(request.title)
        return {"decision": "deny"}

    dirs = Dirs(state=tmp_path / "state", config=tmp_path / "config")
    runtime, _ = build_runtime([root], config, dirs=dirs, asker=deny, long_lived=False)
    for command in ("ls", "touch made.txt", "cat made.txt"):
        result = await runtime.call(CallParams(name="bash", arguments={"command": command}))
        assert not result.is_error, text_of(result)
    assert made == ["ls", "touch made.txt", "cat made.txt"]  # once each: policy and tool
    assert prompts == [] and (root / "made.txt").exists()
    assert runtime.services.get(CommandPlanner)._kept == {}  # taken by the tool


async def test_a_checkpoint_that_fails_is_said_in_the_result(bwrap: str, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    runtime = make_runtime(root)
    store = runtime.services.get(Checkpoints).store(root)
    store.repo.git_dir.parent.mkdir(parents=True, exist_ok=True)
    store.repo.git_dir.write_text("a file where the shadow repository should be\n")
    result = await call_tool(runtime, "bash", {"command": "touch made.txt"})
    assert not result.is_error
    assert f"[no checkpoint of {root}: the snapshot failed" in text_of(result)


async def test_a_writers_checkpoint_that_fails_is_said_in_the_result(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    runtime = make_runtime(root)
    store = runtime.services.get(Checkpoints).store(root)
    store.repo.git_dir.parent.mkdir(parents=True, exist_ok=True)
    store.repo.git_dir.write_text("a file where the shadow repository should be\n")
    result = await call_tool(runtime, "write_file", {"path": "new.txt", "content": "x\n"})
    assert not result.is_error, text_of(result)
    assert (root / "new.txt").read_text() == "x\n"  # the write matters more
    assert "[no checkpoint: recording the change failed (git init failed" in text_of(result)
    assert "toolhost/revert cannot undo this call]" in text_of(result)
