"""`preApproved` over plain LSP: a client that did not declare the capability cannot skip
the prompt by marking its call; the user is asked and their "no" stands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fake_editor import APPROVALS, FakeEditor
from tests.helpers import lsp_call, lsp_session, text_of

OLD = "def total_value(items):"
NEW = "def total(items):"


async def edit_marked_pre_approved(
    workspace: Path, experimental: dict[str, bool]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    editor = FakeEditor()
    editor.script = editor.answer({"decision": "deny", "reason": "not this one"})
    async with lsp_session(
        workspace, experimental=experimental, client_factory=editor.factory
    ) as client:
        await lsp_call(client, "read_file", {"path": "src/inventory.py"})
        result = await lsp_call(
            client,
            "edit_file",
            {"path": "src/inventory.py", "old_string": OLD, "new_string": NEW},
            preApproved=True,
        )
    return result, editor.prompts


async def test_undeclared_pre_approved_still_prompts_and_the_deny_stands(workspace: Path) -> None:
    before = (workspace / "src" / "inventory.py").read_bytes()
    result, prompts = await edit_marked_pre_approved(workspace, APPROVALS)
    assert [p["tool"] for p in prompts] == ["edit_file"]
    assert result["error"]["code"] == "permission.user_denied"
    assert "not this one" in text_of(result)
    assert (workspace / "src" / "inventory.py").read_bytes() == before


async def test_declared_pre_approved_skips_the_servers_prompt(workspace: Path) -> None:
    result, prompts = await edit_marked_pre_approved(workspace, {**APPROVALS, "preApproved": True})
    assert prompts == []
    assert not result["isError"], text_of(result)
    assert NEW in (workspace / "src" / "inventory.py").read_text()
