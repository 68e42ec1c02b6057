"""An editor that serves fs/* itself (its unsaved buffers): toolhost reads what the editor
has, writes a file with unsaved text into the editor's buffer, and uses the disk for the
rest (the SDK editor keeps buffers in memory; the agent is the SCRIPTED TEST AGENT)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp.harness import audit_lines, run_editor, scripted_agent, toolhost_acp

pytestmark = pytest.mark.slow

FS = {"fs": {"readTextFile": True, "writeTextFile": True}}


def test_unsaved_buffers_are_read_and_written_through_the_editor(node: Path, ws: Path) -> None:
    notes, crlf = str(ws / "notes.md"), str(ws / "crlf.txt")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "read", "path": notes},
                {"op": "write", "path": notes, "content": "unsaved, then edited\n"},
                {"op": "read", "path": crlf},
                {"op": "write", "path": crlf, "content": "one\nthree\n"},
                {"op": "read", "path": str(ws / ".env")},
            ]
        ],
        permissions=["allow_once", "allow_once"],
        client_capabilities=FS,
        buffers={notes: "# Notes\n\nunsaved in the editor\n"},
    )
    read_notes, write_notes, read_crlf, write_crlf, secret = run.results()
    # the unsaved buffer is what the agent reads, and where its write goes
    assert read_notes == {"ok": {"content": "# Notes\n\nunsaved in the editor\n"}}
    assert write_notes == {"ok": {}}
    writes = [e for e in run.of("fs") if e["method"] == "fs/write_text_file"]
    assert [(e["path"], e["buffer"], e["content"]) for e in writes] == [
        (notes, True, "unsaved, then edited\n")
    ]
    assert (ws / "notes.md").read_text() == "# Notes\n\nline three\n"  # the disk is untouched
    (asked, _) = run.of("permission")
    diff = asked["params"]["toolCall"]["content"][0]
    assert diff["oldText"] == "# Notes\n\nunsaved in the editor\n"
    # a file the editor has no unsaved text for: toolhost's own atomic write, CRLF kept
    assert read_crlf == {"ok": {"content": "one\r\ntwo\r\n"}}
    assert write_crlf == {"ok": {}}
    assert (ws / "crlf.txt").read_bytes() == b"one\r\nthree\r\n"
    # the editor is never asked for a secret
    assert secret["error"]["data"]["code"] == "workspace.secret_file"
    assert not [e for e in run.of("fs") if e["path"].endswith(".env")]
    assert [line["outcome"] for line in audit_lines() if line["tool"] == "write"] == ["ok", "ok"]
