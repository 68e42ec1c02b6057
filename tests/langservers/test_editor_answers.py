"""lsp_* questions asked of the editor first (toolhost/lspRequest), over a real `toolhost
serve` subprocess. The test client plays an editor that declares (or not) `lspProxy`;
the real editors' own servers answer in tests/nvim and tests/vscode."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.fake_editor import FakeEditor
from tests.helpers import lsp_call, lsp_session, text_of
from tests.langservers.conftest import copy_fixture, require_server

pytestmark = pytest.mark.langserver

Answer = Callable[[dict[str, Any]], Awaitable[Any]]
UNICODE_LINE = 3  # unicode_names.py: CJK names and emoji before `make_circle`


def handled(result: Any, server: str = "pyright") -> Answer:
    async def respond(params: dict[str, Any]) -> Any:
        return {"handled": True, "result": result, "server": server}

    return respond


async def not_handled(params: dict[str, Any]) -> Any:
    return {"handled": False}


async def answers_too_late(params: dict[str, Any]) -> Any:
    # After toolhost's 1 s bound, before the session ends (its own server takes longer).
    await asyncio.sleep(1.5)
    return {"handled": True, "result": [], "server": "slow-server"}


async def fails(params: dict[str, Any]) -> Any:
    raise RuntimeError("the editor's language client crashed")


def definition_location(root: Path) -> dict[str, Any]:
    start = {"line": 14, "character": 4}
    return {"uri": (root / "shapes.py").as_uri(), "range": {"start": start, "end": start}}


async def definition(
    root: Path, editor: FakeEditor, experimental: dict[str, Any] | None, **lsp: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """lsp_definition of make_circle on the unicode line; -> (result, toolhost/status)."""
    async with lsp_session(
        root,
        options={"lsp": lsp} if lsp else None,
        experimental=experimental,
        client_factory=editor.factory,
    ) as client:
        arguments = {"path": "unicode_names.py", "line": UNICODE_LINE, "symbol": "make_circle"}
        result = await lsp_call(client, "lsp_definition", arguments)
        status = await client.protocol.send_request_async("toolhost/status", {})
    return result, status


PROXY = {"lspProxy": True}
EXPECTED_ROW = "shapes.py:15: def make_circle(radius: float) -> Circle:"


def utf16_character(line: str, symbol: str) -> int:
    return len(line[: line.index(symbol)].encode("utf-16-le")) // 2


async def test_the_editor_answers_with_utf16_positions_and_is_named(tmp_path: Path) -> None:
    root = copy_fixture("python", tmp_path)
    editor = FakeEditor(lsp_answer=handled([definition_location(root)]))
    result, status = await definition(root, editor, PROXY, provider="editor")
    assert not result["isError"], text_of(result)
    assert text_of(result) == (
        f"{EXPECTED_ROW}\n(answered by the editor's pyright for the file on disk)"
    )
    (request,) = editor.lsp_requests
    assert request["method"] == "textDocument/definition"
    line = (root / "unicode_names.py").read_text().splitlines()[UNICODE_LINE - 1]
    assert request["params"]["position"] == {
        "line": UNICODE_LINE - 1,
        "character": utf16_character(line, "make_circle"),
    }
    assert request["params"]["textDocument"]["uri"] == (root / "unicode_names.py").as_uri()
    # provider = "editor": toolhost started no server of its own.
    assert status["languageServers"] == []
    assert status["lspAnswers"]["languages"]["python"]["answeredBy"] == "editor"
    assert status["lspAnswers"]["editorAnswers"] is True


@pytest.mark.parametrize(
    "answer", [not_handled, answers_too_late, fails], ids=["handled-false", "timeout", "error"]
)
async def test_without_an_editor_answer_toolhost_s_own_server_answers(
    tmp_path: Path, answer: Answer
) -> None:
    root = copy_fixture("python", tmp_path)
    require_server("python", root)
    editor = FakeEditor(lsp_answer=answer)
    result, status = await definition(root, editor, PROXY, editorTimeoutSeconds=1)
    assert not result["isError"], text_of(result)
    assert text_of(result) == (
        f"{EXPECTED_ROW}\n(answered by toolhost's pyright-langserver for the file on disk)"
    )
    assert len(editor.lsp_requests) == 1
    assert status["lspAnswers"]["languages"]["python"]["answeredBy"] == "toolhost"


async def test_a_client_that_did_not_declare_lsp_proxy_is_never_asked(tmp_path: Path) -> None:
    root = copy_fixture("python", tmp_path)
    require_server("python", root)
    editor = FakeEditor(lsp_answer=handled([definition_location(root)]))
    result, status = await definition(root, editor, {"approvals": True})
    assert not result["isError"], text_of(result)
    assert text_of(result).endswith(
        "(answered by toolhost's pyright-langserver for the file on disk)"
    )
    assert editor.lsp_requests == []
    assert status["lspAnswers"]["editorAnswers"] is False


async def test_provider_spawn_never_asks_the_editor(tmp_path: Path) -> None:
    root = copy_fixture("python", tmp_path)
    require_server("python", root)
    editor = FakeEditor(lsp_answer=handled([definition_location(root)]))
    result, _ = await definition(root, editor, PROXY, provider="spawn")
    assert text_of(result).endswith(
        "(answered by toolhost's pyright-langserver for the file on disk)"
    )
    assert editor.lsp_requests == []


async def test_provider_editor_without_an_answer_is_a_clear_refusal(tmp_path: Path) -> None:
    root = copy_fixture("python", tmp_path)
    editor = FakeEditor(lsp_answer=not_handled)
    result, status = await definition(root, editor, PROXY, provider="editor")
    assert result["isError"]
    assert result["error"]["code"] == "lsp.unavailable"
    assert "the editor has no language server for this file" in text_of(result)
    assert 'lsp.provider to "auto"' in text_of(result)
    assert status["languageServers"] == []


async def test_editor_hover_and_diagnostics_are_formatted_as_toolhost_s_own(
    tmp_path: Path,
) -> None:
    root = copy_fixture("python", tmp_path)
    diagnostic = {
        "range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 22}},
        "severity": 1,
        "source": "Pyright",
        "message": "Type is not assignable\n  to int",
        "code": "reportReturnType",
    }

    async def answer(params: dict[str, Any]) -> Any:
        if params["method"] == "textDocument/hover":
            hover = {"contents": {"kind": "markdown", "value": "def make_circle(...)"}}
            return {"handled": True, "result": hover, "server": "pyright"}
        report = {"kind": "full", "items": [diagnostic]}
        return {"handled": True, "result": report, "server": "Pylance"}

    editor = FakeEditor(lsp_answer=answer)
    async with lsp_session(
        root,
        options={"lsp": {"provider": "editor"}},
        experimental=PROXY,
        client_factory=editor.factory,
    ) as client:
        hover = await lsp_call(
            client, "lsp_hover", {"path": "main.py", "line": 8, "symbol": "make_circle"}
        )
        found = await lsp_call(client, "lsp_diagnostics", {"path": "bad_types.py"})
    assert text_of(hover) == (
        "def make_circle(...)\n(answered by the editor's pyright for the file on disk)"
    )
    assert text_of(found) == (
        "1 diagnostic(s) in bad_types.py:\n"
        "2:12 error [Pyright] Type is not assignable to int (reportReturnType)\n"
        "(answered by the editor's Pylance for the file on disk)"
    )
    assert [r["method"] for r in editor.lsp_requests] == [
        "textDocument/hover",
        "textDocument/diagnostic",
    ]


def doctor(root: Path) -> str:
    """`toolhost doctor` as a user runs it, beside the editor's toolhost (same folders)."""
    run = subprocess.run(
        [sys.executable, "-m", "lsp_server", "doctor", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    start = run.stdout.index("Who answers lsp_* questions")
    return run.stdout[start:].partition("\n\n")[0]


async def test_doctor_says_per_language_who_answers(tmp_path: Path) -> None:
    root = copy_fixture("python", tmp_path)
    alone = await asyncio.to_thread(doctor, root)
    assert alone.splitlines()[0] == "Who answers lsp_* questions (lsp.provider = auto):"
    assert "no editor's toolhost runs for this folder" in alone, alone
    editor = FakeEditor(lsp_answer=handled([definition_location(root)]))
    async with lsp_session(
        root,
        options={"lsp": {"provider": "editor"}},
        experimental=PROXY,
        client_factory=editor.factory,
        client_info=types.ClientInfo(name="Test Editor"),
    ) as client:
        arguments = {"path": "unicode_names.py", "line": UNICODE_LINE, "symbol": "make_circle"}
        result = await lsp_call(client, "lsp_definition", arguments)
        assert not result["isError"], text_of(result)
        beside = await asyncio.to_thread(doctor, root)
    lines = beside.splitlines()
    # The editor's runtime runs with lsp.provider = editor (its settings), the files say auto.
    assert lines[0] == "Who answers lsp_* questions (lsp.provider = editor):", beside
    python = next(line for line in lines if line.strip().startswith("python"))
    assert "Test Editor (toolhost pid" in python and "the editor's pyright" in python, beside
    typescript = next(line for line in lines if line.strip().startswith("typescript"))
    assert "not asked yet: Test Editor" in typescript, beside
