"""`toolhost acp` refuses `session/new` in a home folder or at `/` with `workspace.broad_root`
(the agent never sees that session, so it runs nothing there); a project folder still opens.
The user's own config file can allow it; a `.toolhost.toml` in that home folder cannot. The
agent is the SCRIPTED TEST AGENT (SDK-built)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_server.config.broad_roots import BROAD_ROOT
from lsp_server.home.dirs import Dirs
from tests.acp.harness import scripted_agent, toolhost_acp
from tests.acp.test_bad_input import RawEditor

pytestmark = pytest.mark.slow

ALLOW = "[workspace]\nallow_broad_roots = true\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


def opened(node: Path, cwd: Path, *folders: Path) -> list[dict[str, object]]:
    """The answers to session/new in each folder, through toolhost acp started in `cwd`."""
    editor = RawEditor(toolhost_acp(*scripted_agent(node)), cwd)
    answers = []
    try:
        editor.send(
            {
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            }
        )
        editor.answer_to(0)
        for number, folder in enumerate(folders, 1):
            params = {"cwd": str(folder), "mcpServers": []}
            editor.send({"id": number, "method": "session/new", "params": params})
            answers.append(editor.answer_to(number))
    finally:
        assert editor.close() == 0
    return answers


def test_session_new_in_a_home_folder_or_at_slash_is_refused(
    node: Path, ws: Path, home: Path
) -> None:
    (home / ".toolhost.toml").write_text(ALLOW)  # a workspace file cannot loosen it
    in_home, at_slash, in_project = opened(node, home, home, Path("/"), ws)
    for answer, what in (
        (in_home, f"{home} is your home folder"),
        (at_slash, "/ is the filesystem root"),
    ):
        error = answer["error"]
        assert isinstance(error, dict), answer
        assert error["data"]["code"] == BROAD_ROOT
        assert error["message"].startswith(f"{BROAD_ROOT}: {what}")
        assert "open a project folder" in error["message"]
        assert "allow_broad_roots = true" in error["data"]["recovery"]
    assert in_project["result"]["sessionId"]  # type: ignore[index]
    assert (home / ".bashrc").read_text() == "# mine\n"


def test_session_new_in_a_home_folder_the_user_allowed(node: Path, home: Path) -> None:
    config = Dirs.from_environment().user_config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(ALLOW)
    (answer,) = opened(node, home, home)
    assert answer["result"]["sessionId"]  # type: ignore[index]
