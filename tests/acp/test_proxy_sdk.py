"""`toolhost acp` between the official ACP SDK (editor side) and the SCRIPTED TEST AGENT
(SDK-built): reads, writes, terminals and permissions served through the runtime."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.acp.harness import audit_lines, run_editor, scripted_agent, toolhost_acp

pytestmark = pytest.mark.slow


def test_read_edit_and_run_go_through_toolhost(node: Path, ws: Path) -> None:
    notes = str(ws / "notes.md")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "read", "path": notes},
                {"op": "read", "path": notes, "line": 2, "limit": 2},
                {"op": "write", "path": notes, "content": "# Notes\n\nline three, edited\n"},
                {"op": "terminal", "command": "cat notes.md && echo ran"},
            ]
        ],
        permissions=["allow_once"],
    )
    results = run.results()
    assert [list(r) for r in results] == [["ok"]] * 4, run.events
    assert results[0]["ok"] == {"content": "# Notes\n\nline three\n"}
    assert results[1]["ok"] == {"content": "\nline three\n"}
    terminal = results[3]["ok"]
    assert terminal["exit"] == {"exitCode": 0, "signal": None}
    assert "line three, edited\nran" in terminal["output"]["output"]
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three, edited\n"
    # initialize: the agent was told the client serves files and terminals
    caps = run.reports()[0]["clientCapabilities"]
    assert caps["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert caps["terminal"] is True
    # toolhost's audit log has each of them, in the ACP session
    session = run.of("session")[0]["result"]["sessionId"]
    tools = [(line["tool"], line["session"]) for line in audit_lines()]
    assert ("acp_read_text_file", session) in tools
    assert ("write", session) in tools
    assert ("bash", session) in tools


def _error(result: dict[str, Any]) -> dict[str, Any]:
    assert "error" in result, result
    error: dict[str, Any] = result["error"]
    return error


def _readable(error: dict[str, Any], code: str) -> None:
    """`<CODE>: <cause>; <recovery>` with the code in data."""
    assert error["message"].startswith(f"{code}: "), error
    assert "; " in error["message"]
    assert error["data"]["code"] == code
    assert error["data"]["recovery"]


def test_a_stale_write_is_refused_and_succeeds_after_a_read(node: Path, ws: Path) -> None:
    notes = str(ws / "notes.md")
    fresh = str(ws / "fresh.md")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "write", "path": notes, "content": "never read\n"},
                {"op": "read", "path": notes},
                {"op": "terminal", "command": "echo changed-behind-its-back >> notes.md"},
                {"op": "write", "path": notes, "content": "stale\n"},
                {"op": "read", "path": notes},
                {"op": "write", "path": notes, "content": "after the re-read\n"},
                {"op": "write", "path": fresh, "content": "a new file\n"},
            ]
        ],
        permissions=["allow_once"] * 3,
    )
    results = run.results()
    _readable(_error(results[0]), "FS_NOT_OBSERVED")
    _readable(_error(results[3]), "FS_STALE_VERSION")
    assert "changed-behind-its-back" in results[4]["ok"]["content"]
    assert results[5] == {"ok": {}}
    assert results[6] == {"ok": {}}
    assert (ws / "notes.md").read_text() == "after the re-read\n"
    assert (ws / "fresh.md").read_text() == "a new file\n"
    # only the two accepted writes were asked about
    assert len(run.of("permission")) == 2


def test_line_endings_and_encoding_are_kept(node: Path, ws: Path) -> None:
    crlf = str(ws / "crlf.txt")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "read", "path": crlf},
                {"op": "write", "path": crlf, "content": "one\ntwo\nthree\n"},
            ]
        ],
        permissions=["allow_once"],
    )
    results = run.results()
    assert results[0] == {"ok": {"content": "one\r\ntwo\r\n"}}
    assert results[1] == {"ok": {}}
    assert (ws / "crlf.txt").read_bytes() == b"one\r\ntwo\r\nthree\r\n"


def test_a_secret_a_relative_path_and_a_path_outside_are_refused(
    node: Path, ws: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "read", "path": str(ws / ".env")},
                {"op": "read", "path": "notes.md"},
                {"op": "read", "path": str(outside)},
                {"op": "write", "path": str(outside), "content": "mine now\n"},
                {"op": "read", "path": str(ws / "missing.md")},
            ]
        ],
        permissions=["allow_once"] * 2,
    )
    secret, relative, read_out, write_out, missing = (_error(r) for r in run.results())
    _readable(secret, "workspace.secret_file")
    assert "do-not-leak" not in json.dumps(run.events)
    _readable(relative, "invalid_argument")
    assert relative["code"] == -32602
    _readable(read_out, "workspace.outside_scope")
    _readable(write_out, "workspace.outside_scope")
    _readable(missing, "FS_NOT_FOUND")
    assert outside.read_text() == "not yours\n"
    assert run.of("permission") == []


def test_the_permission_request_carries_the_diff(node: Path, ws: Path) -> None:
    notes = str(ws / "notes.md")
    new_text = "# Notes\n\nline three\nline four\n"
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [[{"op": "read", "path": notes}, {"op": "write", "path": notes, "content": new_text}]],
        permissions=["allow_once"],
    )
    (asked,) = run.of("permission")
    params = asked["params"]
    assert params["sessionId"] == run.of("session")[0]["result"]["sessionId"]
    call = params["toolCall"]
    assert call["kind"] == "edit"
    assert call["content"] == [
        {"type": "diff", "path": notes, "oldText": "# Notes\n\nline three\n", "newText": new_text}
    ]
    kinds = [(option["optionId"], option["kind"]) for option in params["options"]]
    assert kinds == [
        ("allow_once", "allow_once"),
        ("allow_session", "allow_always"),
        ("allow_always", "allow_always"),
        ("deny", "reject_once"),
    ]
    assert run.results()[1] == {"ok": {}}
    assert (ws / "notes.md").read_text() == new_text
    audit = [line for line in audit_lines() if line["tool"] == "write"]
    assert audit[-1]["decision"] == "allow_once"


def test_a_denied_permission_leaves_the_file_unchanged(node: Path, ws: Path) -> None:
    notes = str(ws / "notes.md")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "read", "path": notes},
                {"op": "write", "path": notes, "content": "denied\n"},
                {"op": "write", "path": notes, "content": "cancelled\n"},
            ]
        ],
        permissions=["deny", "cancel"],
    )
    denied, cancelled = (_error(r) for r in run.results()[1:])
    _readable(denied, "permission.user_denied")
    _readable(cancelled, "permission.user_denied")
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"
    assert [line["outcome"] for line in audit_lines() if line["tool"] == "write"] == [
        "permission.user_denied",
        "permission.user_denied",
    ]


def test_allow_for_this_session_is_remembered(node: Path, ws: Path) -> None:
    notes = str(ws / "notes.md")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "read", "path": notes},
                {"op": "write", "path": notes, "content": "one\n"},
                {"op": "write", "path": notes, "content": "two\n"},
            ]
        ],
        permissions=["allow_session"],
    )
    assert run.results()[1:] == [{"ok": {}}, {"ok": {}}]
    assert len(run.of("permission")) == 1  # the second write went by the session's rule
    decisions = [line["decision"] for line in audit_lines() if line["tool"] == "write"]
    assert decisions[0] == "allow_session"
    assert (ws / "notes.md").read_text() == "two\n"


def test_the_session_cwd_is_the_root_unless_root_holds_it(node: Path, ws: Path) -> None:
    sub = ws / "sub"
    sub.mkdir()
    prompts = [[{"op": "read", "path": str(ws / "notes.md")}]]
    alone = run_editor(node, toolhost_acp(*scripted_agent(node)), sub, prompts)
    _readable(_error(alone.results()[0]), "workspace.outside_scope")
    rooted = run_editor(
        node, toolhost_acp(*scripted_agent(node), options=("--root", str(ws))), sub, prompts
    )
    assert rooted.results()[0] == {"ok": {"content": "# Notes\n\nline three\n"}}


def test_a_large_file_is_read_whole_not_cut_to_the_output_bound(node: Path, ws: Path) -> None:
    lines = [f"line {n}: " + "x" * 90 for n in range(1, 3001)]  # ~300 KB, 10x the bound
    text = "\n".join(lines) + "\n"
    (ws / "big.txt").write_text(text, encoding="utf-8")
    big = str(ws / "big.txt")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [[{"op": "read", "path": big}, {"op": "read", "path": big, "line": 2999, "limit": 5}]],
    )
    whole, tail = run.results()
    assert whole["ok"]["content"] == text
    assert tail["ok"]["content"] == lines[2998] + "\n" + lines[2999] + "\n"
