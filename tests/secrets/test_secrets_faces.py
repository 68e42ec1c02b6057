"""The same secrets through `toolhost serve` (LSP's toolhost/call, progress lines) and
`toolhost acp` (terminal/output and fs/read_text_file answered by toolhost itself)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from lsp_server.sandbox.platforms import find_backend
from tests.acp.harness import audit_lines, node_folder, run_editor, scripted_agent, toolhost_acp
from tests.conftest import missing_part, require_program
from tests.helpers import lsp_call, lsp_session, text_of
from tests.secrets.probes import (
    FAKE_API_KEY,
    PROBES,
    SERVER_ENV,
    leaked,
    make_workspace,
    user_config,
)

pytestmark = pytest.mark.timeout(300)


@pytest.mark.slow
async def test_lsp_face_prints_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SERVER_ENV.items():
        monkeypatch.setenv(name, value)
    root = tmp_path / "ws"
    make_workspace(root)
    user_config(Path(os.environ["XDG_CONFIG_HOME"]), "off")
    answers = []
    async with lsp_session(root, {"policy": {"mode": "bypass"}}) as client:
        for probe in PROBES[:12]:
            answers.append(await lsp_call(client, "bash", {"command": probe}))
        answers.append(await lsp_call(client, "read_file", {"path": "config.py"}))
        answers.append(await lsp_call(client, "grep", {"pattern": "sk-live"}))
        did_calls = json.dumps(client.did_calls)  # type: ignore[attr-defined]
    assert "‹secret:FAKE_API_KEY›" in text_of(answers[-2])
    leaks = [leaked(json.dumps(a, ensure_ascii=False)) for a in answers]
    assert not any(leaks), leaks
    assert not leaked(did_calls)
    assert not leaked(json.dumps(audit_lines()))


def test_acp_terminals_and_reads_print_no_secret(tmp_path: Path) -> None:
    require_program("bwrap", "ACP terminals run in toolhost's bubblewrap sandbox")
    found = find_backend(os.environ.get("PATH"))
    if found.problem is not None:
        missing_part(found.problem)
    node = node_folder(tmp_path)
    root = tmp_path / "ws"
    make_workspace(root)
    (root / ".git").mkdir()
    user_config(Path(os.environ["XDG_CONFIG_HOME"]), "workspace-write")
    steps: list[dict[str, Any]] = [
        {"op": "terminal", "command": "sh", "args": ["-c", "printenv; cat .env config.py"]},
        {"op": "terminal", "command": "grep", "args": ["-r", "sk-live", "."]},
        {"op": "terminal", "command": "cat", "args": ["keys/server.pem"]},
        # A cut through the middle of the value: replaced before the cut, so no half of it.
        {"op": "terminal", "command": "cat", "args": ["config.py"], "outputByteLimit": 20},
        {"op": "read", "path": str(root / "config.py")},
        {
            "op": "write",
            "path": str(root / "config.py"),
            "content": "API_KEY = '‹secret:FAKE_API_KEY›'\n",
        },
    ]
    run = run_editor(node, toolhost_acp(*scripted_agent(node)), root, [steps], env=SERVER_ENV)
    results = run.results()
    assert len(results) == len(steps), run
    everything = json.dumps(run.events, ensure_ascii=False)
    assert not leaked(everything), leaked(everything)
    assert not leaked(json.dumps(audit_lines()))
    assert "‹secret:FAKE_API_KEY›" in results[0]["ok"]["output"]["output"]
    assert "‹secret:.env:DB_PASSWORD›" in results[0]["ok"]["output"]["output"]
    cut = results[3]["ok"]["output"]
    assert cut["truncated"] and FAKE_API_KEY[-8:] not in cut["output"]
    assert "‹secret:FAKE_API_KEY›" in json.dumps(results[4], ensure_ascii=False)
    assert results[5]["error"]["data"]["code"] == "edit.secret_placeholder", results[5]
    assert FAKE_API_KEY in (root / "config.py").read_text()
