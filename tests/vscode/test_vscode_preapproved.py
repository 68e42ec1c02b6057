"""`preApproved` (set by the VS Code extension's language-model tool path after VS Code's own
confirmation) replaces the server's prompt only for a client that declared it; it never
overrides readOnly mode."""

from __future__ import annotations

from pathlib import Path

from lsp_server.protocol import CallResult
from lsp_server.runtime.dispatch import Runtime
from tests.helpers import call_tool, make_runtime


def runtime_for(root: Path, mode: str, declared: bool) -> Runtime:
    runtime = make_runtime(root, mode=mode)
    runtime.client.features.pre_approved = declared
    return runtime


async def edit(runtime: Runtime, pre_approved: bool) -> CallResult:
    await call_tool(runtime, "read_file", {"path": "hello.txt"}, session="vscode-lm")
    return await call_tool(
        runtime,
        "edit_file",
        {"path": "hello.txt", "old_string": "hello", "new_string": "bye"},
        session="vscode-lm",
        pre_approved=pre_approved,
    )


def workspace_with_file(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "hello.txt").write_text("hello\n")
    return root


async def test_pre_approved_from_a_declaring_client_runs_without_a_prompt(tmp_path: Path) -> None:
    root = workspace_with_file(tmp_path)
    result = await edit(runtime_for(root, "default", declared=True), pre_approved=True)
    assert not result.is_error, result
    assert (root / "hello.txt").read_text() == "bye\n"


async def test_pre_approved_is_ignored_from_a_client_that_did_not_declare_it(
    tmp_path: Path,
) -> None:
    root = workspace_with_file(tmp_path)
    result = await edit(runtime_for(root, "default", declared=False), pre_approved=True)
    assert result.is_error
    assert result.error is not None
    assert result.error.code == "permission.unattended"
    assert (root / "hello.txt").read_text() == "hello\n"


async def test_without_the_mark_the_server_still_asks(tmp_path: Path) -> None:
    root = workspace_with_file(tmp_path)
    result = await edit(runtime_for(root, "default", declared=True), pre_approved=False)
    # No approvals capability here: "ask" falls back to the unattended decision (deny).
    assert result.error is not None
    assert result.error.code == "permission.unattended"
    assert "no one could be asked to approve this call" in result.error.message
    assert (root / "hello.txt").read_text() == "hello\n"


async def test_read_only_mode_wins_over_pre_approved(tmp_path: Path) -> None:
    root = workspace_with_file(tmp_path)
    result = await edit(runtime_for(root, "readOnly", declared=True), pre_approved=True)
    assert result.error is not None
    assert result.error.code == "permission.rule_denied"
    assert "the policy mode is readOnly" in result.error.message
    assert (root / "hello.txt").read_text() == "hello\n"
