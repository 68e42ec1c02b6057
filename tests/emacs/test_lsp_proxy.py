"""lsp_* answered by the language server a real Emacs runs through eglot (issue: the
editor's own servers). eglot manages the Python buffers with a real pyright the test starts
as a user's config would; toolhost.el answers toolhost/lspRequest through it, and toolhost
starts no pyright of its own while that server manages the buffer."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from lsp_server.langservers.discovery import resolve_server
from lsp_server.langservers.table import ROWS_BY_NAME
from tests.emacs.conftest import make_emacs
from tests.langservers.conftest import FIXTURES, require_server

pytestmark = pytest.mark.real_client

# The same row toolhost's own pyright gives (tests/langservers/test_servers.py, unicode).
DEFINITION = "shapes.py:15: def make_circle(radius: float) -> Circle:"
EDITOR_S = "(answered by the editor's pyright for the editor buffer (version {}))"


@pytest.fixture(scope="module")
def out(emacs_program: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    emacs = make_emacs(emacs_program, tmp_path_factory.mktemp("lsp-proxy"))
    for source in (FIXTURES / "python").iterdir():
        shutil.copy(source, emacs.workspace / source.name)
    require_server("python", emacs.workspace)
    pyright = resolve_server(ROWS_BY_NAME["python"], emacs.workspace, {})
    return emacs.run("lsp_proxy", TOOLHOST_TEST_PYRIGHT=str(pyright.program))


def _below(pid: int, processes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The processes below `pid` (listed parents first)."""
    below, found = {pid}, []
    for proc in processes:
        if proc["parent"] in below:
            below.add(proc["pid"])
            found.append(proc)
    return found


def test_eglot_s_pyright_answers_and_toolhost_starts_none(out: dict[str, Any]) -> None:
    assert out["client_capabilities"]["lspProxy"] is True
    assert out["definition"] == {"isError": False, "text": f"{DEFINITION}\n{EDITOR_S.format(0)}"}

    # A file no buffer had: visited without being shown, and answered by the same pyright.
    assert out["unicode_loaded"] is True and out["unicode_shown"] is False
    rows, _, provenance = out["unicode"]["text"].rpartition("\n")
    assert out["unicode"]["isError"] is False and rows == DEFINITION, out["unicode"]
    assert provenance.startswith("(answered by the editor's pyright "), provenance
    # toolhost's UTF-16 positions land on the symbol's first character in the buffer, also
    # after CJK and emoji (the emoji count two units each).
    assert out["landed"] == ["make_circle(1.0", "make_circle(1.0", "added_in_buffer"]

    assert out["language_servers"] == []
    assert out["lsp_answers"]["languages"]["python"]["answeredBy"] == "editor"
    assert [answer["server"] for answer in out["answers"]] == ["pyright"] * 4
    assert "\n  python       the editor's pyright\n" in out["status_view"], out["status_view"]
    # pyright runs under Emacs; nothing that mentions pyright runs under toolhost's server.
    processes = out["processes"]
    pyright = [p for p in processes if p["pid"] == out["pyright_pid"]]
    assert [p["parent"] for p in pyright] == [out["emacs_pid"]], processes
    under_toolhost = _below(out["toolhost_pid"], processes)
    assert not [p for p in under_toolhost if "pyright" in p["args"] + p["name"]], processes


def test_an_unsaved_buffer_is_answered_for_its_current_version(out: dict[str, Any]) -> None:
    assert "added_in_buffer" not in out["main_disk"]
    # toolhost hears about the buffers eglot manages with pyright: reads see unsaved text.
    assert "added = added_in_buffer()" in out["read_main"]["text"], out["read_main"]
    version = out["main_version"]
    assert version > 0
    assert out["added"] == {
        "isError": False,
        "text": f"main.py:13: def added_in_buffer() -> int:\n{EDITOR_S.format(version)}",
    }

    # ... and its edits of those buffers land in them, next to the user's unsaved text.
    assert out["edit"]["isError"] is False, out["edit"]
    assert "big = Circle(20.0)" in out["edited_buffer"], out["edited_buffer"]
    assert "added = added_in_buffer()" in out["edited_buffer"]
    assert out["edited_disk"] == out["main_disk"]
    assert out["confirmations"] == 0

    assert out["bad_modified"] is True and "return 42" not in out["bad_disk"]
    text = out["diagnostics"]["text"]
    assert out["diagnostics"]["isError"] is False, text
    assert text.startswith("2 diagnostic(s) in bad_types.py:"), text
    assert "\n2:12 error [Pyright] " in text  # on disk
    assert "\n6:12 error [Pyright] " in text  # only in the unsaved buffer
    assert text.endswith(EDITOR_S.format(out["bad_version"])), text


def test_a_buffer_no_eglot_server_manages_gets_toolhost_s_own_answer(
    out: dict[str, Any],
) -> None:
    assert out["unmanaged_answers"] == [{"handled": False}]
    assert out["unmanaged"] == {
        "isError": False,
        "text": f"{DEFINITION}\n(answered by toolhost's pyright-langserver for the file on disk)",
    }


def test_a_hung_editor_server_is_waited_for_a_bounded_time_then_toolhost_answers(
    out: dict[str, Any],
) -> None:
    assert out["hung_answers"] == 0  # Emacs answered neither: it gave up with an error
    version = out["hung_version"]
    toolhost_s = (
        f"(answered by toolhost's pyright-langserver for the editor buffer (version {version}))"
    )
    text = out["hung_diagnostics"]["text"]
    assert out["hung_diagnostics"]["isError"] is False, text
    assert text.startswith("1 diagnostic(s) in main.py:\n18:13 error [Pyright] "), text
    assert text.endswith(toolhost_s), text
    assert out["hung_definition"] == {"isError": False, "text": f"{DEFINITION}\n{toolhost_s}"}
