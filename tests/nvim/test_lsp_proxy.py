"""lsp_* answered by the language server a real Neovim runs (issue: the editor's own
servers). The toolhost plugin answers toolhost/lspRequest through the pyright the test
started with vim.lsp.start; toolhost starts no pyright of its own."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from lsp_server.langservers.discovery import resolve_server
from lsp_server.langservers.table import ROWS_BY_NAME
from tests.langservers.conftest import FIXTURES, require_server
from tests.nvim.conftest import make_neovim

pytestmark = pytest.mark.real_client

# The same row toolhost's own pyright gives (tests/langservers/test_servers.py, unicode).
DEFINITION = "shapes.py:15: def make_circle(radius: float) -> Circle:"


@pytest.fixture(scope="module")
def out(nvim_program: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    neovim = make_neovim(nvim_program, tmp_path_factory.mktemp("lsp-proxy"))
    for source in (FIXTURES / "python").iterdir():
        shutil.copy(source, neovim.workspace / source.name)
    require_server("python", neovim.workspace)
    pyright = resolve_server(ROWS_BY_NAME["python"], neovim.workspace, {})
    return neovim.run("lsp_proxy", TOOLHOST_TEST_PYRIGHT=str(pyright.program)).out


def test_definition_is_answered_by_the_editor_s_pyright(out: dict[str, Any]) -> None:
    assert out["definition"]["isError"] is False, out["definition"]
    assert out["definition"]["text"] == (
        f"{DEFINITION}\n(answered by the editor's pyright for the editor buffer (version 0))"
    )


def test_cjk_and_emoji_before_the_symbol_resolve_as_on_toolhost_s_own_path(
    out: dict[str, Any],
) -> None:
    text = out["unicode"]["text"]
    assert out["unicode"]["isError"] is False, text
    rows, _, provenance = text.rpartition("\n")
    assert rows == DEFINITION
    assert provenance.startswith("(answered by the editor's pyright ")


def test_an_unsaved_buffer_is_answered_for_its_current_version(out: dict[str, Any]) -> None:
    assert out["bad_modified"] is True
    assert "return 42" not in out["disk"]
    text = out["diagnostics"]["text"]
    assert out["diagnostics"]["isError"] is False, text
    assert text.startswith("2 diagnostic(s) in bad_types.py:"), text
    assert "\n2:12 error [Pyright] " in text  # on disk
    assert "\n6:12 error [Pyright] " in text  # only in the unsaved buffer
    assert text.endswith(
        f"(answered by the editor's pyright for the editor buffer (version {out['bad_version']}))"
    )


def test_toolhost_starts_no_language_server_of_its_own(out: dict[str, Any]) -> None:
    assert out["language_servers"] == []
    assert out["lsp_answers"]["languages"]["python"]["answeredBy"] == "editor"
    assert out["lsp_answers"]["editorAnswers"] is True
    # pyright runs under Neovim; nothing runs under toolhost's server.
    processes = out["processes"]
    toolhost = {p["pid"] for p in processes if p["name"] == "toolhost"}
    assert toolhost, processes
    below_toolhost = set(toolhost)
    for proc in processes:  # listed parents first
        if proc["parent"] in below_toolhost:
            below_toolhost.add(proc["pid"])
    assert below_toolhost == toolhost, processes
    pyright = [p for p in processes if p["name"].startswith("pyright")]
    assert [p["parent"] for p in pyright] == [out["nvim_pid"]], processes
