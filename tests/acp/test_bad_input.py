"""Bad input on both sides of `toolhost acp`: clear errors, the editor connection stays up,
nothing that was done is lost. The agent is the SCRIPTED TEST AGENT (SDK-built)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.acp.harness import REPO, audit_lines, run_editor, scripted_agent, toolhost_acp
from tests.fuzz_envelopes import envelopes, key, owed

pytestmark = pytest.mark.slow

WAIT = 60


class RawEditor:
    """An editor that writes raw lines (what no SDK would send) and reads JSON lines."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.messages.put(json.loads(line))

    def send_line(self, line: str | bytes) -> None:
        assert self.process.stdin is not None
        data = line.encode() if isinstance(line, str) else line
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps({"jsonrpc": "2.0", **message}))

    def answer_to(self, request_id: Any) -> dict[str, Any]:
        while True:
            message = self.messages.get(timeout=WAIT)
            if message.get("id") == request_id and "method" not in message:
                return message

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=WAIT)


def test_malformed_messages_and_unknown_methods_from_the_editor(node: Path, ws: Path) -> None:
    editor = RawEditor(toolhost_acp(*scripted_agent(node)), ws)
    try:
        editor.send_line("this is not json")
        assert editor.answer_to(None)["error"]["code"] == -32700
        editor.send_line("[1, 2]")
        assert editor.answer_to(None)["error"]["code"] == -32600
        editor.send_line('{"id": 5, "method": "initialize"}')  # no "jsonrpc": "2.0"
        assert editor.answer_to(5)["error"]["code"] == -32600  # its own id: it can be told
        editor.send_line('{"jsonrpc": "2.0", "id": "m", "method": 5}')
        assert "not a string" in editor.answer_to("m")["error"]["message"]
        # Not JSON (not UTF-8; nested too deeply): answered at the id the bytes show, which
        # is the request the editor waits on.
        editor.send_line(b'{"jsonrpc": "2.0", "id": 6, "method": "x", "params": "\xff\xfe"}')
        assert editor.answer_to(6)["error"]["code"] == -32700
        deep = "[" * 100_000 + "]" * 100_000
        editor.send_line(f'{{"jsonrpc": "2.0", "id": "deep", "method": "x", "params": {deep}}}')
        assert "RecursionError" in editor.answer_to("deep")["error"]["message"]
        editor.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            }
        )
        assert editor.answer_to(1)["result"]["protocolVersion"] == 1
        editor.send({"id": 2, "method": "x/not_a_method", "params": {}})
        assert editor.answer_to(2)["error"]["code"] == -32601  # the agent's own answer
        editor.send(
            {"id": "s", "method": "session/new", "params": {"cwd": str(ws), "mcpServers": []}}
        )
        assert editor.answer_to("s")["result"]["sessionId"]
    finally:
        assert editor.close() == 0


def test_bad_requests_from_the_agent(node: Path, ws: Path) -> None:
    notes = str(ws / "notes.md")
    big = str(ws / "big.txt")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [
                {"op": "raw", "line": "{garbage from the agent"},
                {"op": "request", "method": "x/unknown_client_method", "params": {"a": 1}},
                {"op": "request", "method": "fs/read_text_file", "params": {"path": 5}},
                {
                    "op": "request",
                    "method": "fs/read_text_file",
                    "params": {"path": notes, "line": 0},
                },
                {
                    "op": "request",
                    "method": "fs/read_text_file",
                    "params": {"sessionId": "nope", "path": notes},
                },
                {"op": "request", "method": "terminal/output", "params": {"terminalId": "term-99"}},
                {"op": "write_big", "path": big, "bytes": 20 * 1024 * 1024},
                {"op": "read", "path": notes},
                {"op": "write", "path": notes, "content": "still works\n"},
            ]
        ],
        permissions=["allow_once"],
    )
    garbage, unknown, bad_path, bad_line, bad_session, no_terminal, huge, read, write = (
        run.results()
    )
    assert garbage == {"ok": {}}
    # an unknown client method passes through to the editor, whose answer comes back
    assert [e["method"] for e in run.of("request")] == ["x/unknown_client_method"]
    assert unknown["error"]["code"] == -32601
    assert bad_path["error"]["data"]["code"] == "invalid_argument"
    assert bad_line["error"]["data"]["code"] == "schema_mismatch"
    assert bad_session["error"]["data"]["code"] == "invalid_argument"
    assert no_terminal["error"]["data"]["code"] == "job.not_found"
    assert huge["error"]["data"]["code"] == "FS_TOO_LARGE"
    assert huge["error"]["message"].startswith("FS_TOO_LARGE: ")
    assert not Path(big).exists()
    assert read["ok"]["content"] == "# Notes\n\nline three\n"
    assert write == {"ok": {}}
    assert (ws / "notes.md").read_text() == "still works\n"


def test_an_agent_that_dies_mid_session(node: Path, ws: Path) -> None:
    notes = str(ws / "notes.md")
    run = run_editor(
        node,
        toolhost_acp(*scripted_agent(node)),
        ws,
        [
            [{"op": "read", "path": notes}, {"op": "write", "path": notes, "content": "kept\n"}],
            [{"op": "exit", "code": 7}],
            [{"op": "read", "path": notes}],
        ],
        permissions=["allow_once"],
    )
    first, died, after = run.of("prompt")
    assert first["result"] == {"stopReason": "end_turn"}
    assert died["error"]["data"]["code"] == "acp.agent_exited"
    assert "status 7" in died["error"]["message"]
    assert died["error"]["message"].startswith("acp.agent_exited: ")
    assert after["error"]["data"]["code"] == "acp.agent_exited"
    # the editor's connection stayed up until the editor closed it; the edit is kept
    kinds = [event["event"] for event in run.events]
    assert kinds.index("done") < kinds.index("proxy-exit")
    assert run.of("proxy-exit")[0]["code"] == 0
    assert (ws / "notes.md").read_text() == "kept\n"
    assert [line["outcome"] for line in audit_lines() if line["tool"] == "write"] == ["ok"]


def test_an_agent_that_cannot_start(node: Path, ws: Path) -> None:
    run = run_editor(node, toolhost_acp(str(ws / "no-such-agent")), ws, [])
    (fatal,) = run.of("fatal")
    assert fatal["error"]["data"]["code"] == "acp.agent_exited"
    assert "could not be started" in fatal["error"]["message"]


def test_when_the_editor_goes_the_agent_and_its_terminals_go_too(node: Path, ws: Path) -> None:
    marker = f"600.{os.getpid() % 10000:04d}1"  # a sleep no other test runs
    editor = RawEditor(toolhost_acp(*scripted_agent(node)), ws)
    try:
        editor.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            }
        )
        agent_pid = editor.answer_to(1)["result"]["_meta"]["pid"]
        editor.send(
            {"id": 2, "method": "session/new", "params": {"cwd": str(ws), "mcpServers": []}}
        )
        session = editor.answer_to(2)["result"]["sessionId"]
        create = {
            "op": "request",
            "method": "terminal/create",
            "params": {"command": f"sleep {marker}"},
        }
        prompt = [{"type": "text", "text": json.dumps([create])}]
        editor.send(
            {
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": prompt},
            }
        )
        assert editor.answer_to(3)["result"] == {"stopReason": "end_turn"}
        assert _running(f"sleep {marker}")
    finally:
        assert editor.close() == 0
    assert not _running(f"sleep {marker}")
    try:
        os.kill(agent_pid, 0)
    except ProcessLookupError:
        pass
    else:
        raise AssertionError(f"the agent (pid {agent_pid}) outlived toolhost acp")


def _running(command: str) -> bool:
    found = subprocess.run(["pgrep", "-f", command], capture_output=True, text=True)
    return found.returncode == 0


def test_six_hundred_malformed_envelopes_are_answered_and_the_proxy_lives(
    node: Path, ws: Path
) -> None:
    """Lone surrogates in ids, methods, keys and values (19 of 631 such lines ended the
    proxy), odd ids, huge values, deep nesting, broken JSON and bytes that are not UTF-8,
    streamed: every request with a string or integer id is answered at that id, by the
    proxy or the agent, and the proxy is alive at the end."""
    editor = RawEditor(toolhost_acp(*scripted_agent(node)), ws)
    try:
        editor.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            }
        )
        assert editor.answer_to(1)["result"]["protocolVersion"] == 1
        lines = envelopes(["session/new", "session/prompt", "session/cancel", "x/y"])
        assert len(lines) >= 600
        for envelope in lines:
            editor.send_line(envelope.line)
        waiting = owed(lines)
        while waiting:
            message = editor.messages.get(timeout=WAIT)  # queue.Empty when nobody answers
            if "id" in message and "method" not in message:
                waiting.discard(key(message["id"]))
        new = {"cwd": str(ws), "mcpServers": []}
        editor.send({"id": "after", "method": "session/new", "params": new})
        assert editor.answer_to("after")["result"]["sessionId"]
    finally:
        assert editor.close() == 0
