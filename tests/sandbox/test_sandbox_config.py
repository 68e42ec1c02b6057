"""Sandbox settings across config layers (an untrusted workspace may only tighten), and
the bash tool's refusal of full-screen programs, through the in-process runtime."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_server.config.layers import load_config
from lsp_server.config.trust import TrustStore
from tests.helpers import call_tool, make_runtime, text_of


def _load(tmp_path: Path, workspace: str, user: str = "", trusted: bool = False):  # type: ignore[no-untyped-def]
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    (root / ".toolhost.toml").write_text(workspace)
    user_file = tmp_path / "user.toml"
    user_file.write_text(user)
    return load_config(
        init_options={"workspaceTrusted": trusted},
        client_section=None,
        roots=[root],
        user_config=user_file,
        trust=TrustStore(tmp_path / "state"),
    )


def test_default_is_workspace_write(tmp_path: Path) -> None:
    loaded = _load(tmp_path, "")
    assert loaded.config.shell.sandbox == "workspace-write"
    # The built-in protected list (sandbox/protected.py) needs no setting; these only add.
    assert loaded.config.shell.sandbox_read_only == []
    assert loaded.config.workspace.protected_paths == []


def test_untrusted_workspace_cannot_turn_the_sandbox_off(tmp_path: Path) -> None:
    loaded = _load(tmp_path, '[shell]\nsandbox = "off"\nsandbox_network = true\n')
    assert loaded.config.shell.sandbox == "workspace-write"
    assert loaded.config.shell.sandbox_network is False
    shown = "\n".join(loaded.notices)
    assert "new file, not yet approved, so these entries are ignored" in shown
    assert "shell.sandbox = 'off', shell.sandbox_network = True" in shown


def test_untrusted_workspace_tightens_over_every_layer(tmp_path: Path) -> None:
    loaded = _load(
        tmp_path,
        '[shell]\nsandbox = "read-only"\nsandbox_network = false\n',
        user='[shell]\nsandbox = "off"\nsandbox_network = true\n',
    )
    assert loaded.config.shell.sandbox == "read-only"
    assert loaded.config.shell.sandbox_network is False


def test_user_config_may_loosen_and_an_approved_workspace_file_too(tmp_path: Path) -> None:
    assert _load(tmp_path, "", user='[shell]\nsandbox = "off"\n').config.shell.sandbox == "off"
    # A workspace the client trusts is not enough: the agent could have written the file.
    trusted = _load(tmp_path, '[shell]\nsandbox = "off"\n', trusted=True)
    assert trusted.config.shell.sandbox == "workspace-write"
    found = trusted.workspace_files[0]
    TrustStore(tmp_path / "state").approve_config(found.root, found.path, found.sha256)
    approved = _load(tmp_path, '[shell]\nsandbox = "off"\n')
    assert approved.config.shell.sandbox == "off"


@pytest.mark.parametrize(
    ("command", "named"),
    [("vi notes.txt", "`vi`"), ("top", "`top`"), ("cd sub && vim x", "`vim`")],
)
async def test_full_screen_programs_return_at_once_with_the_reason(
    tmp_path: Path, command: str, named: str
) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    runtime = make_runtime(root)
    result = await call_tool(runtime, "bash", {"command": command})
    assert result.error is not None
    assert result.error.code == "shell.needs_terminal"
    text = text_of(result)
    assert f"{named} is a full-screen program: it needs a terminal" in text
    assert "Instead:" in text


async def test_top_in_batch_mode_runs(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    result = await call_tool(runtime, "bash", {"command": "top -b -n 1 | head -1"})
    assert result.error is None, text_of(result)
    assert text_of(result).startswith("top - ")
